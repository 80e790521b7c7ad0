package realapi

import "fmt"

// Known are the differences between kube-apiserver v1.37.2 and informersim that the suite
// accepts, one row each, every one listed with its reason in docs/realcluster.md. A run fails
// on a difference none of them explains, and on a row that explained nothing (stale).
var Known = []KnownDifference{}

// CompileKnown checks and compiles the rows of known.
func CompileKnown(known []KnownDifference) error {
	seen := map[string]bool{}
	for i := range known {
		if err := known[i].compile(); err != nil {
			return err
		}
		if seen[known[i].ID] {
			return fmt.Errorf("realapi: known difference %s listed twice", known[i].ID)
		}
		seen[known[i].ID] = true
	}
	return nil
}
