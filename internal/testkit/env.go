package testkit

// Home is a Getenv (cadre.Options.Getenv) that knows only CADRE_HOME, set
// to home: a runtime under test sees neither the machine's provider keys
// nor its settings.
func Home(home string) func(string) string {
	return func(k string) string {
		if k == "CADRE_HOME" {
			return home
		}
		return ""
	}
}
