// Records what Go's regexp says about every [pattern, input] pair in cases.json: whether
// regexp.Compile accepts the pattern (else its error text) and, if so, regexp.MatchString's answer,
// the way the production kernel applies `regex` predicates. The dev kernel's tests check re2js
// against the recorded answers (expected.json), so they run without Go.
//
// Regenerate after editing cases.json:  go run . < cases.json > expected.json
package main

import (
	"encoding/json"
	"os"
	"regexp"
	"runtime"
)

type verdict struct {
	Pattern string `json:"pattern"`
	Input   string `json:"input"`
	Match   *bool  `json:"match,omitempty"`
	Error   string `json:"error,omitempty"`
}

func main() {
	var cases [][2]string
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		panic(err)
	}
	out := struct {
		Go    string    `json:"go"`
		Cases []verdict `json:"cases"`
	}{Go: runtime.Version()}
	for _, c := range cases {
		v := verdict{Pattern: c[0], Input: c[1]}
		if rx, err := regexp.Compile(c[0]); err != nil {
			v.Error = err.Error()
		} else {
			m := rx.MatchString(c[1])
			v.Match = &m
		}
		out.Cases = append(out.Cases, v)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
}
