package gitstate

import "testing"

// TestParseFsync follows git 2.39's parse_fsync_components: the default
// (pack, pack-metadata, commit-graph), "none", negation, aggregates, and
// names matched by prefix as git's strncmp does.
func TestParseFsync(t *testing.T) {
	for v, want := range map[string]int{
		"":                    fsyncDefault,
		"none":                0,
		"none,pack":           fsyncPack | fsyncPackMetadata, // "pack" is a prefix of "pack-metadata"
		"-pack":               fsyncCommitGraph,
		"-pack-metadata":      fsyncPack | fsyncCommitGraph,
		"all":                 fsyncAll,
		"none, reference":     fsyncReference,
		"committed":           fsyncDefault | fsyncLooseObject | fsyncReference,
		"none,objects":        fsyncLooseObject | fsyncPack,
		"none,nonsense":       0,
		"-derived-metadata":   fsyncPack,
		"loose-object":        fsyncDefault | fsyncLooseObject,
		"none,pack-metadata":  fsyncPackMetadata,
		"none,-pack,pack":     fsyncPack | fsyncPackMetadata,
		"none,commit-graph  ": fsyncCommitGraph,
	} {
		if got := parseFsync(v); got != want {
			t.Errorf("parseFsync(%q) = %b, want %b", v, got, want)
		}
	}
}
