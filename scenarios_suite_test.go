package informersim_test

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
)

// SweepEnv sets how many seeds each concept family's sweep runs; the default keeps make test
// well under ten minutes on two cores.
const SweepEnv = "INFORMERSIM_SWEEP"

const defaultSweep = 50

// The course as specs: one entry per scenario file, labelled by its concepts, checked against its
// expected blocks; a seed sweep per concept family; and a determinism spec. A spec's seeds come
// from GinkgoRandomSeed() and the spec's own text, so -p and --randomize-all cannot change what a
// spec runs; INFORMERSIM_SEED=N runs that one seed in every sweep (the replay of a failure).
var _ = Describe("the course", Label("course"), func() {
	course := scenarios.Course()

	for _, sc := range course {
		It(sc.Name+": "+sc.Title, Label(sc.Labels...), func() {
			res := runRecorded(sc, scenarios.Options{})
			for _, m := range res.Mismatches() {
				Fail(fmt.Sprintf("%s: %s printed\n%s\nwant\n%s", m.Pos, m.Directive.Line(), m.Output, m.Expected))
			}
		})
	}

	var families []string
	for _, sc := range course {
		for _, l := range sc.Labels {
			if !slices.Contains(families, l) {
				families = append(families, l)
			}
		}
	}
	slices.Sort(families)
	for _, family := range families {
		It("holds every oracle on a seed sweep of the "+family+" family", Label(family, "sweep"), func() {
			seeds := specSeeds(sweepSize())
			policies := []string{"random", "fifo", "pct"}
			runs := 0
			for _, sc := range course {
				if !slices.Contains(sc.Labels, family) {
					continue
				}
				for i, seed := range seeds {
					runRecorded(sc, scenarios.Options{Seed: &seed, Policy: policies[i%len(policies)]})
					runs++
				}
			}
			AddReportEntry("runs", runs)
		})
	}

	It("replays every scenario byte for byte", Label("determinism"), func() {
		seed := specSeeds(1)[0]
		for _, sc := range course {
			for _, s := range []*uint64{nil, &seed} {
				a := runRecorded(sc, scenarios.Options{Seed: s})
				b := runRecorded(sc, scenarios.Options{Seed: s})
				Expect(b.Hash).To(Equal(a.Hash), "%s seed %d: two runs, two trace hashes", sc.Name, a.Seed)
				Expect(b.Narration()).To(Equal(a.Narration()), "%s seed %d", sc.Name, a.Seed)
			}
		}
	})
})

// specSeeds returns n seeds derived from the suite's random seed and the current spec's text, or
// the one seed of INFORMERSIM_SEED.
func specSeeds(n int) []uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s", GinkgoRandomSeed(), CurrentSpecReport().FullText())
	seeds, err := world.Seeds(h.Sum64()>>16, uint64(n))
	Expect(err).NotTo(HaveOccurred())
	return seeds
}

func sweepSize() int {
	if v := os.Getenv(SweepEnv); v != "" {
		n, err := strconv.Atoi(v)
		Expect(err).NotTo(HaveOccurred(), "$%s", SweepEnv)
		Expect(n).To(BeNumerically(">", 0), "$%s", SweepEnv)
		return n
	}
	return defaultSweep
}

// runRecorded runs sc, records its seed and trace hash in the report, and fails the spec on a
// failed run, writing the whole trace where Ginkgo keeps artifacts.
func runRecorded(sc scenarios.Scenario, opts scenarios.Options) *scenarios.Result {
	GinkgoHelper()
	res, err := scenarios.Run(sc.Name, sc.Text, opts)
	Expect(err).NotTo(HaveOccurred())
	AddReportEntry(fmt.Sprintf("%s seed %d", sc.Name, res.Seed), res.Hash)
	if res.Failure != nil || len(res.Mismatches()) > 0 && opts.Seed == nil {
		path := writeTrace(res)
		page := writeTimeline(sc, res)
		if res.Failure != nil {
			Fail(fmt.Sprintf("%s seed %d failed: %v\nreplay: %s\nwhole trace: %s\ntimeline: %s", sc.Name, res.Seed, res.Failure, res.Env.ReplayCommand(), path, page))
		}
		AddReportEntry("whole trace", path)
		AddReportEntry("timeline", page)
	}
	return res
}

// writeTimeline writes the run's timeline (package timeline: one self-contained HTML page) next
// to its trace and returns its path.
func writeTimeline(sc scenarios.Scenario, res *scenarios.Result) string {
	r, err := scenarios.RunRecord(sc, res)
	if err != nil {
		return "(not written: " + err.Error() + ")"
	}
	var b bytes.Buffer
	if err := r.WriteHTML(&b); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	path := filepath.Join(GinkgoT().ArtifactDir(), fmt.Sprintf("%s-seed-%d.html", res.Name, res.Seed))
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return path
}

// writeTrace writes the run's narration and its full trace to a file in Ginkgo's artifact
// directory and returns its path.
func writeTrace(res *scenarios.Result) string {
	dir := GinkgoT().ArtifactDir()
	path := filepath.Join(dir, fmt.Sprintf("%s-seed-%d.trace", res.Name, res.Seed))
	var b strings.Builder
	b.WriteString(res.Narration())
	if w := res.Env.World(); w != nil {
		b.WriteString("\n--- full trace ---\n")
		b.WriteString(w.Sim().Trace().String())
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return path
}
