package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxLine bounds one inbound message, as go-sdk's own stdio transport
// does (mcp.DefaultMaxLineLength).
const maxLine = mcp.DefaultMaxLineLength

// stdioTransport is the server's transport: newline-delimited
// JSON-RPC on stdin and stdout, like go-sdk's IOTransport, plus what a
// server needs whose clients pipe requests and hang up, or send garbage:
//
//   - a line that is not JSON is answered with -32700 (parse error), one
//     that is not a JSON-RPC message with -32600 (invalid request), and the
//     server reads on (go-sdk's transport ends the session); a batch (a
//     JSON array) gets -32600 too: MCP dropped batches in 2025-06-18;
//   - at the end of input, every request already read is answered before
//     Read reports io.EOF (go-sdk's reports it at once, its session then
//     refuses to write, and responses in flight are lost: go-sdk #1061);
//   - a request whose id is taken by one not answered yet gets -32600
//     (go-sdk drops it);
//   - an error response go-sdk leaves without a code (a request before
//     initialize, a second initialize, params that do not decode) gets the
//     protocol's: -32600 before the session is initialized or for a second
//     initialize, -32602 (invalid params) after.
type stdioTransport struct {
	in  io.Reader
	out io.Writer
	// inputEnded, if set, is called when input ends (the client closed
	// its side or went away), while requests read may still be running.
	inputEnded func()
}

// Connect starts reading input.
func (t *stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{
		out:      t.out,
		incoming: make(chan jsonrpc.Message),
		closed:   make(chan struct{}),
		answered: make(chan struct{}, 1),
		pending:  map[jsonrpc.ID]string{},
	}
	// lines are read ahead of their delivery, so the end of input is seen
	// even while go-sdk is not taking messages (a call still running)
	lines := make(chan []byte, 256)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(t.in, 64*1024)
		for {
			line, tooLong, err := readLine(r, maxLine)
			if tooLong {
				line = nil
				c.writeError(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("parse error: a message is longer than %d bytes", maxLine))
			}
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- bytes.TrimSpace(line):
				case <-c.closed:
					return
				}
			}
			if err != nil {
				if err != io.EOF {
					c.readErr = err
				}
				if t.inputEnded != nil {
					t.inputEnded()
				}
				return
			}
		}
	}()
	go c.readLoop(lines)
	return c, nil
}

type stdioConn struct {
	writeMu sync.Mutex // one message at a time on out
	out     io.Writer

	incoming chan jsonrpc.Message // closed at the end of input
	readErr  error                // why input ended; set before incoming closes
	closed   chan struct{}
	once     sync.Once

	mu          sync.Mutex
	pending     map[jsonrpc.ID]string // requests read and not answered yet: their methods
	initialized bool                  // initialize was answered without an error
	answered    chan struct{}         // a pending request was answered
}

// readLoop decodes the lines read, answers those that are no JSON-RPC
// message itself, and hands the messages to Read.
func (c *stdioConn) readLoop(lines <-chan []byte) {
	defer close(c.incoming)
	for line := range lines {
		if msg := c.decode(line); msg != nil {
			select {
			case c.incoming <- msg:
			case <-c.closed:
				return
			}
		}
	}
}

// readLine returns the next line without its newline; a line longer than
// max is skipped and reported as too long.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if err != bufio.ErrBufferFull {
			return line, tooLong, err
		}
	}
}

// decode returns the line's message, or answers it and returns nil.
func (c *stdioConn) decode(line []byte) jsonrpc.Message {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		c.writeError(jsonrpc.ID{}, jsonrpc.CodeParseError, fmt.Sprintf("parse error: %v; send one JSON-RPC message per line", err))
		return nil
	}
	if line[0] == '[' {
		c.writeError(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "invalid request: batches are not supported (MCP removed them in 2025-06-18); send one message per line")
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil {
		if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "" {
			err = errors.New(`"method" is empty`)
		}
	}
	if err != nil {
		c.writeError(requestID(line), jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v", err))
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		c.mu.Lock()
		_, inUse := c.pending[req.ID]
		if !inUse {
			c.pending[req.ID] = req.Method
		}
		c.mu.Unlock()
		if inUse {
			// go-sdk would drop it without an answer
			c.writeError(req.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: id %v belongs to a request not answered yet; give each request its own id", req.ID.Raw()))
			return nil
		}
	}
	return msg
}

// requestID is the id of a message that could not be decoded, if it has a
// valid one, so that the client can match the error to its request.
func requestID(line []byte) jsonrpc.ID {
	var m struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(line, &m) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(m.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// Read returns the next message. At the end of input it waits until every
// request read has been answered, then reports io.EOF (or the read error).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case msg, ok := <-c.incoming:
		if ok {
			return msg, nil
		}
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for {
		c.mu.Lock()
		n := len(c.pending)
		c.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-c.answered:
		case <-c.closed:
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if c.readErr != nil {
		return nil, c.readErr
	}
	return nil, io.EOF
}

// Write sends one message, giving a coded error response its code.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	resp, isResp := msg.(*jsonrpc.Response)
	if isResp {
		c.mu.Lock()
		method := c.pending[resp.ID]
		if resp.Error != nil {
			resp = withCode(resp, method == "initialize" || !c.initialized)
			msg = resp
		} else if method == "initialize" {
			c.initialized = true
		}
		c.mu.Unlock()
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeLine(data)
	if isResp {
		c.mu.Lock()
		if _, ok := c.pending[resp.ID]; ok {
			delete(c.pending, resp.ID)
			select {
			case c.answered <- struct{}{}:
			default:
			}
		}
		c.mu.Unlock()
	}
	return err
}

// withCode returns resp with a protocol error code if its error has none.
func withCode(resp *jsonrpc.Response, invalidRequest bool) *jsonrpc.Response {
	var we *jsonrpc.Error
	if errors.As(resp.Error, &we) && we.Code != 0 {
		return resp
	}
	code := int64(jsonrpc.CodeInvalidParams)
	if invalidRequest {
		code = jsonrpc.CodeInvalidRequest
	}
	return &jsonrpc.Response{ID: resp.ID, Error: &jsonrpc.Error{Code: code, Message: resp.Error.Error()}}
}

// writeError answers a line that never reached the session. It encodes the
// response itself: jsonrpc.EncodeMessage leaves out a null id, which
// JSON-RPC requires when the request's id could not be read.
func (c *stdioConn) writeError(id jsonrpc.ID, code int64, message string) {
	data, err := json.Marshal(struct {
		Version string         `json:"jsonrpc"`
		ID      any            `json:"id"`
		Error   *jsonrpc.Error `json:"error"`
	}{"2.0", id.Raw(), &jsonrpc.Error{Code: code, Message: message}})
	if err == nil {
		err = c.writeLine(data)
	}
	if err != nil {
		c.Close() // the client is gone
	}
}

func (c *stdioConn) writeLine(data []byte) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	_, err := c.out.Write(append(data, '\n'))
	return err
}

// Close stops Read; input is left to the process's end (a read of stdin
// cannot be interrupted portably).
func (c *stdioConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

// SessionID is empty: stdio has one session.
func (c *stdioConn) SessionID() string { return "" }
