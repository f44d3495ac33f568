package testscripts

import "github.com/rogpeppe/go-internal/testscript"

// customCommands are the script commands beyond testscript's built-ins.
func customCommands() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){}
	for name, fn := range cliCommands() {
		cmds[name] = fn
	}
	for name, fn := range mcpCommands() {
		cmds[name] = fn
	}
	for name, fn := range githubCommands() {
		cmds[name] = fn
	}
	for name, fn := range delegateCommands() {
		cmds[name] = fn
	}
	for name, fn := range agentCommands() {
		cmds[name] = fn
	}
	for name, fn := range modelAPICommands() {
		cmds[name] = fn
	}
	for name, fn := range tmuxCommands() {
		cmds[name] = fn
	}
	for name, fn := range watchCommands() {
		cmds[name] = fn
	}
	for name, fn := range historyCommands() {
		cmds[name] = fn
	}
	for name, fn := range maintenanceCommands() {
		cmds[name] = fn
	}
	return cmds
}
