package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/cadre-dev/cadre/internal/permission"
)

// LocalSettingsPath is the project's untracked settings file, the one an
// approval "for this project" writes to.
func LocalSettingsPath(cwd string) string {
	return filepath.Join(cwd, ".cadre", "settings.local.json")
}

// UserSettingsPath is the user's settings file under the state folder.
func UserSettingsPath(cadreHome string) string {
	return filepath.Join(cadreHome, "settings.json")
}

// CheckLocal refuses a settings.local.json that is not the user's own: a
// link, a file outside the project, or one git tracks. Writing an approval
// into any of those would hand it to whoever shares the file.
func CheckLocal(cwd, path string) error {
	if ok, why := personalLocal(cwd, path); !ok {
		return &Error{File: path, Msg: "not written: it " + why + ", so it is not your own local settings"}
	}
	return nil
}

// AddRules adds rules to the permissions.<behavior> list (allow, ask or
// deny) of the settings file at path, creating the file and its folder
// when missing; rules already there are not repeated. Everything else in
// the file is kept as written (the order of top-level and permissions keys
// aside), permissions.task's order included. The file is replaced whole,
// so a crash leaves the old file or the new, never half of one.
func AddRules(path, behavior string, rules []string) error {
	switch behavior {
	case "allow", "ask", "deny":
	default:
		return &Error{File: path, Msg: fmt.Sprintf("cannot add %q rules: want allow, ask or deny", behavior)}
	}
	top := map[string]json.RawMessage{}
	data, err := os.ReadFile(path)
	switch {
	case err == nil && len(bytes.TrimSpace(data)) > 0:
		if _, err := parseObject(path, data); err != nil {
			return err
		}
		if err := json.Unmarshal(data, &top); err != nil {
			return &Error{File: path, Msg: fmt.Sprintf("invalid JSON: %v", err), Err: err}
		}
	case err != nil && !os.IsNotExist(err):
		return &Error{File: path, Msg: "cannot be read", Err: err}
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return &Error{File: path, Msg: "permissions: want an object", Err: err}
		}
	}
	var list []string
	if raw, ok := perms[behavior]; ok && !bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		if err := json.Unmarshal(raw, &list); err != nil {
			return &Error{File: path, Msg: "permissions." + behavior + ": want a list of rules", Err: err}
		}
	}
	for _, r := range rules {
		if _, err := permission.ParseRule(r); err != nil {
			return &Error{File: path, Msg: fmt.Sprintf("permissions.%s: rule %q: %v", behavior, r, err), Err: err}
		}
		if !slices.Contains(list, r) {
			list = append(list, r)
		}
	}
	if perms[behavior], err = marshal(list, false); err != nil {
		return err
	}
	if top["permissions"], err = marshal(perms, false); err != nil {
		return err
	}
	out, err := marshal(top, true)
	if err != nil {
		return err
	}
	return replaceFile(path, out)
}

// marshal writes rules as people wrote them: "&&" and "<" stay readable,
// not \u0026.
func marshal(v any, indent bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if !indent {
		return bytes.TrimRight(b.Bytes(), "\n"), nil
	}
	return b.Bytes(), nil
}

// replaceFile writes data to path through a temporary file in the same
// folder and a rename.
func replaceFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return &Error{File: path, Msg: "cannot create its folder", Err: err}
	}
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, ".settings-*.json")
	if err != nil {
		return &Error{File: path, Msg: "cannot be written", Err: err}
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return &Error{File: path, Msg: "cannot be written", Err: err}
	}
	return nil
}
