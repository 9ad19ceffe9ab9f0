package subagent

import "github.com/cadre-dev/cadre/internal/subagent/notify"

// profileFor builds the tool profile of a test's surface. The profiles are
// packages that import this one, which an internal test cannot import:
// bridge_test.go, of package subagent_test, sets it before any test runs,
// so that the core's tests drive runs through the real tools.
var profileFor func(surface string) (NewProfile, error)

// SetProfiles is how bridge_test.go hands the profiles in.
func SetProfiles(f func(surface string) (NewProfile, error)) { profileFor = f }

// rewire makes the parts New built from the configuration see a test's
// changes to it (a wrapped task store, another owner or interval): the
// delivery desk, the record writer, the task events and the shells' runner.
func (s *Service) rewire() {
	s.desk.Tasks = s.cfg.Tasks
	s.records.Tasks, s.records.Owner = s.cfg.Tasks, s.cfg.Owner
	s.events = notify.Publisher{Bus: s.cfg.Bus, Now: s.cfg.Now}
	s.shells = s.newShells()
}
