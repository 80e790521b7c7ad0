package record

import (
	"bytes"
	"errors"
	"html/template"
	"os"
	"path/filepath"
	"strings"
)

// WriteSite writes runs, the course's lessons in order, as a site into dir (created if missing):
// index.html and one page per lesson, NAME.html. It returns the files written.
func WriteSite(dir string, runs []*Run) ([]string, error) {
	if dir == "" {
		return nil, errors.New("timeline: WriteCourse: no directory")
	}
	if len(runs) == 0 {
		return nil, errors.New("timeline: the course is empty")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var files []string
	write := func(name string, b []byte) error {
		p := filepath.Join(dir, name)
		files = append(files, p)
		return os.WriteFile(p, b, 0o644)
	}
	for i, r := range runs {
		l := &lesson{Number: LessonNumber(r.Scenario.Name)}
		if i > 0 {
			l.Prev, l.PrevTitle = runs[i-1].Scenario.Name+".html", runs[i-1].Scenario.Title
		}
		if i+1 < len(runs) {
			l.Next, l.NextTitle = runs[i+1].Scenario.Name+".html", runs[i+1].Scenario.Title
		}
		var b bytes.Buffer
		if err := r.writePage(&b, l); err != nil {
			return nil, err
		}
		if err := write(r.Scenario.Name+".html", b.Bytes()); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := indexTemplate.Execute(&b, indexPage{Runs: runs, Style: template.CSS(styleSheet), Pipeline: template.HTML(PipelineSVG(nil))}); err != nil {
		return nil, err
	}
	if err := write("index.html", b.Bytes()); err != nil {
		return nil, err
	}
	return files, nil
}

// LessonNumber is a lesson's number as its file name gives it: "12a" for
// "12a-deltafifo-grouping", "5" for "05-tombstone".
func LessonNumber(name string) string {
	num, _, _ := strings.Cut(name, "-")
	if t := strings.TrimLeft(num, "0"); t != "" {
		return t
	}
	return num
}

type indexPage struct {
	Runs     []*Run
	Style    template.CSS
	Pipeline template.HTML
}

var indexTemplate = template.Must(template.New("index").Funcs(template.FuncMap{"lessonNumber": LessonNumber}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>The informersim course: client-go's informer, one run at a time</title>
<style>{{.Style}}</style>
</head>
<body>
<main>
<h1>The informersim course</h1>
<p>Each lesson teaches one behavior of client-go's informer with a deterministic run of the
simulator: the concept, the pipeline with the parts the lesson is about highlighted, a timeline of
the run (one lane per component, every event on simulated time) and the narrated run, checked on
every build. Replay any lesson from the root of a clone of the repository with
<code>go run -C cmd/informersim . explain NAME</code>, or draw another seed's run with
<code>go run -C cmd/informersim . run NAME --seed N --html "$PWD/run.html"</code>.</p>
<h2>The pipeline</h2>
{{.Pipeline}}
<p class="meta">The narration's short names: <code>inf/reflector</code> is the Reflector,
<code>inf/net</code> and <code>inf/watch</code> the ListerWatcher's responses and watch stream,
<code>inf/queue</code> the DeltaFIFO or RealFIFO (pop), the Indexer (cache-add/update/delete/replace)
and the sharedProcessor (buffer), <code>inf/h1</code> a processorListener and its handler.</p>
<h2>Lessons</h2>
<ol class="lessons">
{{- range .Runs}}
<li><span class="num">{{lessonNumber .Scenario.Name}}.</span> <a href="{{.Scenario.Name}}.html">{{.Scenario.Title}}</a> <code class="meta">{{.Scenario.Name}}</code>{{range .Scenario.Pipeline}}<span class="chip">{{.}}</span>{{end}}</li>
{{- end}}
</ol>
</main>
</body>
</html>
`))
