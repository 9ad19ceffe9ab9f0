package acp

import (
	"fmt"
	"slices"

	"github.com/cadre-dev/cadre"
	acpsdk "github.com/coder/acp-go-sdk"
)

// permissionModes are cadre's permission modes as ACP session modes, for
// the editor's mode picker.
var permissionModes = []acpsdk.SessionMode{
	{Id: "default", Name: "Default", Description: acpsdk.Ptr("Ask before edits, commands and other calls that change things")},
	{Id: "acceptEdits", Name: "Accept edits", Description: acpsdk.Ptr("Edit files in the workspace without asking; ask before commands")},
	{Id: "plan", Name: "Plan", Description: acpsdk.Ptr("Read and plan only: no edits, no commands")},
	{Id: "bypassPermissions", Name: "Bypass permissions", Description: acpsdk.Ptr("Run every call without asking (deny rules still hold)")},
}

// modes is the mode state of a session whose conversation started in
// current; a mode cadre has beyond the four above is listed too, so the
// current one is always among those offered.
func modes(current string) *acpsdk.SessionModeState {
	list := slices.Clone(permissionModes)
	if !slices.ContainsFunc(list, func(m acpsdk.SessionMode) bool { return string(m.Id) == current }) && current != "" {
		list = append(list, acpsdk.SessionMode{Id: acpsdk.SessionModeId(current), Name: current})
	}
	if current == "" {
		current = "default"
	}
	return &acpsdk.SessionModeState{CurrentModeId: acpsdk.SessionModeId(current), AvailableModes: list}
}

// commands are the slash commands the editor offers for a session.
func commands(init *cadre.InitInfo) []acpsdk.SessionUpdate {
	if init == nil || len(init.SlashCommands) == 0 {
		return nil
	}
	var list []acpsdk.AvailableCommand
	for _, name := range init.SlashCommands {
		list = append(list, acpsdk.AvailableCommand{
			Name: name, Description: fmt.Sprintf("Run the /%s command", name),
			Input: &acpsdk.AvailableCommandInput{Unstructured: &acpsdk.UnstructuredCommandInput{Hint: "arguments"}},
		})
	}
	return []acpsdk.SessionUpdate{{AvailableCommandsUpdate: &acpsdk.SessionAvailableCommandsUpdate{SessionUpdate: "available_commands_update", AvailableCommands: list}}}
}
