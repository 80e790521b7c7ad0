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

// NewWorldFromConfig is world.NewFromConfig for a Ginkgo spec: engine settings (simCfg: the
// policy, limits, the trace level) and apiserver settings (apiCfg: replicas, latencies, the
// watch cache) beside the world's, with simCfg.Repro, when empty, set to SpecRepro(simCfg.Seed)
// so that the replay line names the spec. A spec with three apiserver replicas:
//
//	w, err := worldtest.NewWorldFromConfig(sim.Config{Seed: seed}, fakeapi.Config{Replicas: 3}, world.Config{})
func NewWorldFromConfig(simCfg sim.Config, apiCfg fakeapi.Config, cfg world.Config) (*world.World, error) {
	if simCfg.Repro == "" {
		simCfg.Repro = SpecRepro(simCfg.Seed)
	}
	return world.NewFromConfig(simCfg, apiCfg, cfg)
}

// SpecRepro returns world.Repro(seed) focused on the current Ginkgo spec: under go test, inside a
// spec,
//
//	INFORMERSIM_SEED=42 go test -run '^TestX$' ./pkg -args -ginkgo.focus='(^| )my spec does it$'
//
// (the spec's full text, regexp-quoted, in place of any focus the binary was given; a spec
// whose full text ends another's, after a space, runs too). Outside a
// spec, or outside go test, it is world.Repro(seed). NewWorldFromConfig passes it as
// sim.Config.Repro for you.
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
