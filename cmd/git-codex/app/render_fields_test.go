package app

import (
	"bytes"
	"testing"
	"time"
)

func TestRenderFields(t *testing.T) {
	type item struct {
		ID    string `json:"id"`
		State string `json:"state"`
		Note  string `json:"note,omitempty"`
		Extra map[string]string
	}
	type result struct {
		EpicID  string            `json:"epic_id"`
		Count   int               `json:"count"`
		Done    bool              `json:"done"`
		Labels  []string          `json:"labels,omitempty"`
		Empty   string            `json:"empty,omitempty"`
		Nothing *item             `json:"nothing,omitempty"`
		Phases  map[string]string `json:"phases"`
		When    time.Time         `json:"when"`
		Tasks   []item            `json:"tasks"`
		Content string            `json:"content"`
	}
	var out bytes.Buffer
	e := &env{stdout: &out, stderr: &out, width: 80}
	err := e.renderFields(&result{
		EpicID: "e-1", Count: 2, Labels: []string{"a", "b"}, Phases: map[string]string{"z": "1", "a": "2"},
		When:    time.Date(2026, 11, 24, 4, 0, 0, 0, time.UTC),
		Tasks:   []item{{ID: "t-1", State: "REVIEW"}, {ID: "t-2", State: "OPEN", Note: "two\nlines"}},
		Content: "line one\nline two\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "epic_id: e-1\ncount:   2\ndone:    no\nlabels:  a, b\nphases:  a=2, z=1\nwhen:    2026-11-24T04:00:00Z\n" +
		"\ntasks:\nt-1\tREVIEW\t-\nt-2\tOPEN\ttwo lines\n" +
		"\ncontent:\nline one\nline two\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
