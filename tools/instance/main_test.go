package instance

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestMain runs, when asked by the environment, a program a test puts in
// a tmux pane instead of the tests.
func TestMain(m *testing.M) {
	if os.Getenv("CODEX_TEST_FAST_RETURN") != "" {
		fastReturnInput()
		return
	}
	os.Exit(m.Run())
}

// fastReturnWindow is how soon after the last typed key fastReturnInput
// takes an Enter for a newline: Gemini CLI's 30 ms (FAST_RETURN_TIMEOUT),
// doubled, so that an Enter pressed as soon as the text shows is caught
// more often than by the real CLI.
const fastReturnWindow = 60 * time.Millisecond

// fastReturnInput is Gemini CLI's input line as far as Enter goes
// (bufferFastReturn in its KeypressContext): a raw terminal, each key
// shown as it is handled, and an Enter handled within fastReturnWindow of
// the last typed key inserted as a newline ("NEWLINE") instead of
// submitting the line ("SUBMIT <line>").
func fastReturnInput() {
	stty := exec.Command("stty", "raw", "-echo")
	stty.Stdin = os.Stdin
	if err := stty.Run(); err != nil {
		fmt.Println("stty:", err)
		time.Sleep(time.Minute)
		return
	}
	fmt.Print("ready\r\n> ")
	var line []byte
	var last time.Time
	buf := make([]byte, 256)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:n] {
			now := time.Now()
			switch {
			case b == '\r' && now.Sub(last) <= fastReturnWindow:
				fmt.Print("\r\nNEWLINE\r\n> ", string(line))
				last = time.Time{}
			case b == '\r':
				fmt.Printf("\r\nSUBMIT %s\r\n> ", line)
				line, last = line[:0], time.Time{}
			default:
				line = append(line, b)
				fmt.Printf("%c", b)
				last = now
			}
		}
	}
}
