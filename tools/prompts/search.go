package prompts

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// DefaultLimit is how many results a search returns when asked for no
// particular number.
const DefaultLimit = 10

// Result is one search hit: seed 004's SearchResult.
type Result struct {
	C1          string  `json:"c1"`
	C2          string  `json:"c2"`
	C3          string  `json:"c3"`
	Description string  `json:"description"`
	Score       float64 `json:"score" jsonschema:"cosine similarity, 0-1: 0.8+ very high, 0.5-0.8 moderate, 0.2-0.5 low, below 0.2 almost unrelated"`
}

// index is a TF-IDF index over the commands' documents, built once per
// load: for each term, the documents holding it with the term's weight in
// the document's unit-length vector. A query then touches only the
// postings of its own terms.
type index struct {
	docs     []*Command
	idf      map[string]float64
	postings map[string][]posting
}

type posting struct {
	doc    int
	weight float64
}

// buildIndex weighs each term of each document by (1 + ln tf) · idf, with
// the smoothed idf = 1 + ln((N+1)/(df+1)), and normalises each document's
// vector to unit length, so a query's dot product with it is the cosine.
func buildIndex(cmds []*Command) *index {
	ix := &index{docs: cmds, idf: map[string]float64{}, postings: map[string][]posting{}}
	tfs := make([]map[string]int, len(cmds))
	df := map[string]int{}
	for i, c := range cmds {
		tf := termFreqs(c.document())
		tfs[i] = tf
		for t := range tf {
			df[t]++
		}
	}
	n := float64(len(cmds))
	for t, d := range df {
		ix.idf[t] = 1 + math.Log((n+1)/(float64(d)+1))
	}
	for i, tf := range tfs {
		var norm float64
		w := make(map[string]float64, len(tf))
		for t, f := range tf {
			w[t] = (1 + math.Log(float64(f))) * ix.idf[t]
			norm += w[t] * w[t]
		}
		norm = math.Sqrt(norm)
		for t, v := range w {
			ix.postings[t] = append(ix.postings[t], posting{doc: i, weight: v / norm})
		}
	}
	return ix
}

// search scores every document sharing a term with the query by cosine
// similarity and returns the best limit, highest first; equal scores are
// ordered by C3L name, so the order never depends on map iteration.
// Scores are rounded to 4 decimals and lie in [0, 1]; documents sharing
// no term with the query (score 0) are left out.
func (ix *index) search(query string, limit int) []Result {
	qtf := termFreqs(query)
	if len(qtf) == 0 || len(ix.docs) == 0 {
		return []Result{}
	}
	// A query term no document holds has the largest idf: it counts in the
	// query's length (the query asks for something nothing offers).
	unseen := 1 + math.Log(float64(len(ix.docs))+1)
	var qnorm float64
	scores := map[int]float64{}
	for t, f := range qtf {
		idf, ok := ix.idf[t]
		if !ok {
			idf = unseen
		}
		qw := (1 + math.Log(float64(f))) * idf
		qnorm += qw * qw
		for _, p := range ix.postings[t] {
			scores[p.doc] += qw * p.weight
		}
	}
	qnorm = math.Sqrt(qnorm)
	out := make([]Result, 0, len(scores))
	for d, s := range scores {
		c := ix.docs[d]
		score := math.Round(s/qnorm*1e4) / 1e4
		score = math.Max(0, math.Min(1, score))
		if score == 0 {
			continue
		}
		out = append(out, Result{C1: c.C1, C2: c.C2, C3: c.C3, Description: c.Description, Score: score})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return Key(out[i].C1, out[i].C2, out[i].C3) < Key(out[j].C1, out[j].C2, out[j].C3)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

// Search ranks the catalog's commands against query; see index.search.
func (cat *Catalog) Search(query string, limit int) []Result {
	return cat.index.search(query, limit)
}

// HasTerms reports whether query holds anything to search for (not only
// spaces, punctuation and stop words).
func HasTerms(query string) bool { return len(termFreqs(query)) > 0 }

// termFreqs counts a text's terms.
func termFreqs(text string) map[string]int {
	tf := map[string]int{}
	for _, t := range tokenize(text) {
		tf[t]++
	}
	return tf
}

// stopWords carry no meaning for matching commands to a request.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "the": true, "of": true, "to": true, "in": true, "for": true,
	"on": true, "by": true, "with": true, "or": true, "is": true, "it": true, "be": true, "as": true,
	"at": true, "from": true, "this": true, "that": true, "into": true, "its": true, "are": true,
}

// tokenize splits text into terms as Climpt does: words are split on
// anything but letters and digits and at hyphens, underscores and
// camelCase humps, each compound word is also kept whole (group-commit
// gives group-commit, group and commit); terms are lower-cased, plurals
// folded (commits → commit) and stop words dropped.
func tokenize(text string) []string {
	var out []string
	emit := func(w string) {
		w = stem(strings.ToLower(w))
		if w != "" && !stopWords[w] {
			out = append(out, w)
		}
	}
	words := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_'
	})
	for _, w := range words {
		w = strings.Trim(w, "-_")
		if w == "" {
			continue
		}
		parts := splitCompound(w)
		if len(parts) > 1 {
			emit(strings.Map(func(r rune) rune {
				if r == '_' {
					return '-'
				}
				return r
			}, w))
		}
		for _, p := range parts {
			emit(p)
		}
	}
	return out
}

// splitCompound splits a word at hyphens, underscores and lower-to-upper
// case changes.
func splitCompound(w string) []string {
	var parts []string
	start := 0
	runes := []rune(w)
	for i, r := range runes {
		switch {
		case r == '-' || r == '_':
			if i > start {
				parts = append(parts, string(runes[start:i]))
			}
			start = i + 1
		case i > start && unicode.IsUpper(r) && unicode.IsLower(runes[i-1]):
			parts = append(parts, string(runes[start:i]))
			start = i
		}
	}
	if start < len(runes) {
		parts = append(parts, string(runes[start:]))
	}
	return parts
}

// stem folds English plurals so "commits" finds "commit": -ies → -y,
// -ches/-shes/-xes/-sses → drop -es, other -s (not -ss, -us, -is) → drop.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && (strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "sses")):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}
