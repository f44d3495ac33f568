package instance

// What the external tests (package instance_test, which may import the
// assembly, tools/builtin) see of this package's unexported code.
var (
	FirstPrompt = firstPrompt
	WorkPrompt  = workPrompt
)
