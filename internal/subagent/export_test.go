package subagent

// profileFor builds the tool profile of a test's surface. The profiles are
// packages that import this one, which an internal test cannot import:
// bridge_test.go, of package subagent_test, sets it before any test runs,
// so that the core's tests drive runs through the real tools.
var profileFor func(surface string) (NewProfile, error)

// SetProfiles is how bridge_test.go hands the profiles in.
func SetProfiles(f func(surface string) (NewProfile, error)) { profileFor = f }
