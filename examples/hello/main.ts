console.log("hello example pending");
