package app

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/gitcodex/git-codex/tools"
	"github.com/gitcodex/git-codex/ui"
	"github.com/urfave/cli/v2"
)

// uiOptions is what `git codex ui` runs with.
type uiOptions struct {
	Addr  string
	Token string
	Open  bool
}

func (e *env) uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "serve a live web page of the state: instances, review loops, mail, records and the audit log",
		Description: "Serves the page on a loopback address (127.0.0.1, a free port, unless --addr says otherwise) and prints\n" +
			"its URL; the page updates by itself as commits land on refs/codex/state. On any address that is not\n" +
			"loopback a token is required (a random one unless --token gives it), and the printed URL carries it.\n" +
			"Actions from the page (mail, nudge, peek, abandon, kill, any tool the policy lets you call) are the same\n" +
			"tool calls as the CLI's, made as you, with the same audit commit. `?at=<commit or time>` shows a past state.\n" +
			"Stop it with Ctrl-C.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: ui.DefaultAddr, Usage: "listen on `HOST:PORT` (port 0: any free port)"},
			&cli.StringFlag{Name: "token", Usage: "require this `TOKEN` (default: none on loopback, a random one elsewhere)"},
			&cli.BoolFlag{Name: "open", Usage: "open the page in the default browser"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageError{err: fmt.Errorf("ui takes no arguments")}
			}
			return e.runUI(c, uiOptions{Addr: c.String("addr"), Token: c.String("token"), Open: c.Bool("open")})
		},
	}
}

func (e *env) runUI(c *cli.Context, opts uiOptions) error {
	caller, st, err := e.session(c)
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := ui.New(ui.Options{Store: st, Registry: e.reg, Caller: caller, Addr: opts.Addr, Token: opts.Token})
	if err != nil {
		return tools.Errorf(tools.InvalidInput, "%v", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	url, err := srv.Start(ctx)
	if err != nil {
		return tools.Errorf(tools.InvalidInput, "%v; choose another with --addr", err)
	}
	defer srv.Close()
	fmt.Fprintf(e.stdout, "git codex ui: %s\n", url)
	fmt.Fprintln(e.stderr, "git codex: serving the page until Ctrl-C")
	if opts.Open {
		if err := openBrowser(ctx, url); err != nil {
			fmt.Fprintf(e.stderr, "git codex: could not open a browser (%v); open the URL above\n", err)
		}
	}
	<-ctx.Done()
	return nil
}

// openBrowser asks the desktop to open url (xdg-open, or open on macOS).
func openBrowser(ctx context.Context, url string) error {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	cmd := exec.CommandContext(ctx, name, url)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}
