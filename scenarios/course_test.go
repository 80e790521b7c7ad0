package scenarios_test

import (
	"path/filepath"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/scenarios"
)

// TestCourse runs every scenario file of the course against its expected blocks; with -rewrite
// (make rewrite) it regenerates them.
func TestCourse(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no course files: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) { runCourseFile(t, path) })
	}
}

func runCourseFile(t *testing.T, path string) {
	{
		name := filepath.Base(path)
		name = name[:len(name)-len(filepath.Ext(name))]
		env := scenarios.NewEnv(scenarios.Options{Name: name})
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := env.HandleTestData(name, td)
			if err != nil {
				t.Fatal(err)
			}
			return out
		})
		if f := env.Failure(); f != nil {
			t.Errorf("%s: the run failed: %v", name, f)
		}
	}
}
