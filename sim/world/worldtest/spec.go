package worldtest

import (
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// NewWorld is world.New for a Ginkgo spec: the world's repro line (SpecRepro) replays the
// current spec alone, where world.Repro's would replay the whole suite unless the binary was
// given a focus. Outside a spec it is world.New.
func NewWorld(seed uint64, cfg world.Config) (*world.World, error) {
	return world.NewFromConfig(sim.Config{Seed: seed, Repro: SpecRepro(seed)}, fakeapi.Config{}, cfg)
}

// SpecRepro returns world.Repro(seed) focused on the current Ginkgo spec: under go test, inside a
// spec,
//
//	INFORMERSIM_SEED=42 go test -run '^TestX$' ./pkg -args -ginkgo.focus='(^| )my spec does it$'
//
// (the spec's full text, regexp-quoted, in place of any focus the binary was given; a spec
// whose full text ends another's, after a space, runs too). Outside a
// spec, or outside go test, it is world.Repro(seed). Pass it as sim.Config.Repro to
// world.NewFromConfig to build a world with other engine settings.
func SpecRepro(seed uint64) string {
	line := world.Repro(seed)
	text := ginkgo.CurrentSpecReport().FullText()
	if text == "" || !strings.HasPrefix(line, world.SeedEnv+"=") {
		return line
	}
	if i := strings.Index(line, " -args"); i >= 0 {
		line = line[:i]
	}
	// Ginkgo matches a focus against "<suite description> <spec's full text>", and the suite's
	// description is not in the spec's report: anchor the text at its end and at a word start.
	focus := "(^| )" + regexp.QuoteMeta(text) + "$"
	return line + " -args -ginkgo.focus='" + strings.ReplaceAll(focus, "'", `'\''`) + "'"
}
