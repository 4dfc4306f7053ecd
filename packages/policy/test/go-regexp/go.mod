module rebuno.dev/go-regexp-vectors

go 1.22
