package forge

// What the external tests (package forge_test, which may import the
// github client: it imports work, above this package) reach inside.
var (
	IssueMarker     = issueMarker
	DropScaffolding = dropScaffolding
)
