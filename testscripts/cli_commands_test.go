package testscripts

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// cliCommands are the script commands the CLI scripts use:
//
//	jsonget VAR FILE PATH
//	    decodes FILE ("stdout" and "stderr" mean the last command's output)
//	    as JSON and sets $VAR to the value at PATH: dot-separated object
//	    keys and array indexes, e.g. mails.0.id. Strings are set as they
//	    are, anything else as compact JSON. With !, PATH must not exist.
//
//	exitcode N PROG [ARGS...]
//	    runs PROG like exec, keeping its stdout and stderr for the
//	    following stdout/stderr commands, and fails unless it exits with
//	    status N (exec and ! exec only tell zero from non-zero).
func cliCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"jsonget":  cmdJSONGet,
		"exitcode": cmdExitCode,
	}
}

func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: jsonget VAR FILE PATH")
	}
	name, file, path := args[0], args[1], args[2]
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile(file)), &v); err != nil {
		ts.Fatalf("jsonget: %s is not JSON: %v", file, err)
	}
	for _, key := range strings.Split(path, ".") {
		var ok bool
		switch x := v.(type) {
		case map[string]any:
			v, ok = x[key]
		case []any:
			i, err := strconv.Atoi(key)
			if ok = err == nil && i >= 0 && i < len(x); ok {
				v = x[i]
			}
		}
		if !ok {
			if neg {
				return
			}
			ts.Fatalf("jsonget: %s has no %s (stopped at %q)", file, path, key)
		}
	}
	if neg {
		ts.Fatalf("jsonget: %s has %s, want none", file, path)
	}
	s, isString := v.(string)
	if !isString {
		b, err := json.Marshal(v)
		ts.Check(err)
		s = string(b)
	}
	ts.Setenv(name, s)
	ts.Logf("%s=%s", name, s)
}

func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: %q is not a number", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}
