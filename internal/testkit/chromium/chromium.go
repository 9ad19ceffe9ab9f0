package chromium

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
)

// Browser is a headless chromium and its DevTools pipe.
type Browser struct {
	cmd  *exec.Cmd
	in   io.WriteCloser // our end of chromium's fd 3: commands
	done chan struct{}  // closed when the reader has ended

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan reply
	readErr error
}

type reply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Find is the chromium executable, or an error saying it is missing.
func Find() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("chromium is not installed (apt-get install chromium; .ci/run does)")
}

// Start starts headless chromium at exe with a fresh profile in dir and a
// window of width×height.
func Start(ctx context.Context, exe, dir string, width, height int) (*Browser, error) {
	// fd 3 is what chromium reads, fd 4 what it writes.
	cmdR, cmdW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		cmdR.Close()
		cmdW.Close()
		return nil, err
	}
	cmd := exec.CommandContext(ctx, exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-dev-shm-usage", "--remote-debugging-pipe", "--user-data-dir="+dir,
		fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd.ExtraFiles = []*os.File{cmdR, outW}
	// A group of its own: Close ends the renderers and helpers chromium
	// started too, which may outlive it and still write to the profile.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		cmdR.Close()
		cmdW.Close()
		outR.Close()
		outW.Close()
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	cmdR.Close()
	outW.Close()
	b := &Browser{cmd: cmd, in: cmdW, done: make(chan struct{}), waiting: map[int]chan reply{}}
	go b.read(outR)
	return b, nil
}

// read takes chromium's NUL-separated messages and hands each answer to
// its caller; events are dropped.
func (b *Browser) read(r io.ReadCloser) {
	defer close(b.done)
	defer r.Close()
	br := bufio.NewReader(r)
	for {
		msg, err := br.ReadBytes(0)
		if err != nil {
			b.mu.Lock()
			b.readErr = fmt.Errorf("chromium's pipe: %w", err)
			for id, ch := range b.waiting {
				close(ch)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		var m struct {
			ID *int `json:"id"`
			reply
		}
		if json.Unmarshal(msg[:len(msg)-1], &m) != nil || m.ID == nil {
			continue
		}
		b.mu.Lock()
		ch := b.waiting[*m.ID]
		delete(b.waiting, *m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m.reply
		}
	}
}

// Call sends a DevTools command (to a page's session, or the browser
// when session is "") and decodes its result into out.
func (b *Browser) Call(ctx context.Context, session, method string, params, out any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return b.readErr
	}
	b.nextID++
	id := b.nextID
	ch := make(chan reply, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	msg := map[string]any{"id": id, "method": method, "params": params}
	if session != "" {
		msg["sessionId"] = session
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := b.in.Write(append(data, 0)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("%s: chromium went away", method)
		}
		if r.Error != nil {
			return fmt.Errorf("%s: %s (%d)", method, r.Error.Message, r.Error.Code)
		}
		if out != nil {
			return json.Unmarshal(r.Result, out)
		}
		return nil
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Page is a tab attached for commands.
type Page struct {
	b       *Browser
	session string
}

// Open opens url in a new tab.
func (b *Browser) Open(ctx context.Context, url string) (*Page, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return nil, err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &s); err != nil {
		return nil, err
	}
	p := &Page{b: b, session: s.SessionID}
	// Navigated once attached, so that no script of the page runs unseen.
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := b.Call(ctx, p.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return nil, err
	}
	if nav.ErrorText != "" {
		return nil, fmt.Errorf("open %s: %s", url, nav.ErrorText)
	}
	return p, nil
}

// Eval evaluates a JavaScript expression in the page, awaiting it if it
// is a promise, and decodes its value into out.
func (p *Page) Eval(ctx context.Context, expr string, out any) error {
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	// An evaluation that starts while the navigation replaces the
	// document loses its context: it is run again in the new one.
	var err error
	for range 20 {
		err = p.b.Call(ctx, p.session, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true}, &r)
		if err == nil || !strings.Contains(err.Error(), "context was destroyed") {
			break
		}
	}
	if err != nil {
		return err
	}
	if r.Exception != nil {
		return fmt.Errorf("in the page: %s %s", r.Exception.Text, r.Exception.Exception.Description)
	}
	if out != nil && len(r.Result.Value) > 0 {
		return json.Unmarshal(r.Result.Value, out)
	}
	return nil
}

// Key dispatches a key event to the page as a user's key press would
// (Input.dispatchKeyEvent's params: type, key, code, text…).
func (p *Page) Key(ctx context.Context, params map[string]any) error {
	return p.b.Call(ctx, p.session, "Input.dispatchKeyEvent", params, nil)
}

// DOM is the page's document as HTML, as --dump-dom prints it.
func (p *Page) DOM(ctx context.Context) (string, error) {
	var s string
	err := p.Eval(ctx, "document.documentElement.outerHTML", &s)
	return s, err
}

// Screenshot is a PNG of the page's viewport, as --screenshot writes it.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := p.b.Call(ctx, p.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

// Close asks chromium to quit and waits for it; if it does not within
// ctx, it is killed. (Browser.close may get no answer: chromium can exit
// first, which is what was asked.)
func (b *Browser) Close(ctx context.Context) error {
	_ = b.Call(ctx, "", "Browser.close", map[string]any{}, nil) // see above: no answer is fine
	b.in.Close()
	waited := make(chan error, 1)
	go func() { waited <- b.cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = b.cmd.Process.Kill() // it may have just exited
		err = fmt.Errorf("chromium did not quit: %w (then: %v)", ctx.Err(), <-waited)
	}
	<-b.done
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL) // what is left of its group, if anything
	return err
}
