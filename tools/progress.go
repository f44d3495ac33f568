package tools

import "context"

// Progress receives what a long call does while it runs (a delegated
// turn's messages, seed 002's stream): n counts the messages so far and
// message is one JSON object ({"type":"assistant","message":...}). The
// MCP adapter sends each as a progress notification; the CLI prints it.
type Progress func(n int, message string)

type progressKey struct{}

// WithProgress returns ctx carrying p, for the tools a call runs.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressOf is the Progress ctx carries, or nil.
func ProgressOf(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}
