package record

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
)

//go:embed assets/timeline.css
var styleSheet string

//go:embed assets/timeline.js
var script string

// page is what the page template draws: a run (its timeline, verdicts and failure) and, on a
// lesson page, the lesson around it.
type page struct {
	Title    string
	Run      *Run
	Data     template.JS
	Pipeline template.HTML
	Style    template.CSS
	Script   template.JS
	// Lesson, when set, makes the page a course page.
	Lesson *lesson
}

type lesson struct {
	Number     string
	Paragraphs []string
	Prev, Next string // file names of the neighbouring lessons, "" at the ends
	PrevTitle  string
	NextTitle  string
	Narration  []section
}

// section is a caption and the narration up to the next caption.
type section struct {
	Caption string
	Text    string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>{{.Style}}</style>
</head>
<body>
<main>
{{- with .Lesson}}
<nav class="nav"><a href="index.html">↑ the course</a>{{if .Prev}}<a href="{{.Prev}}" rel="prev">← {{.PrevTitle}}</a>{{end}}{{if .Next}}<a href="{{.Next}}" rel="next">{{.NextTitle}} →</a>{{end}}</nav>
<h1>Lesson {{.Number}}: {{$.Run.Scenario.Title}}</h1>
{{- else}}
<h1>{{.Run.Scenario.Name}}{{if .Run.Scenario.Title}}: {{.Run.Scenario.Title}}{{end}}</h1>
{{- end}}
<p class="meta">scenario <code>{{.Run.Scenario.Name}}</code> · seed {{.Run.Seed}} · policy {{.Run.Policy}} · {{len .Run.Events}} trace events · trace sha256 <code>{{.Run.Trace.Hash}}</code> · {{if .Run.Passed}}<span class="verdict-ok">passed</span>{{else}}<span class="verdict-bad">failed</span>{{end}}</p>
{{- with .Lesson}}
<section class="concept">{{range .Paragraphs}}<p>{{.}}</p>{{end}}</section>
{{- end}}
{{- with .Run.Failure}}
<div class="failure"><strong>{{if .Oracle}}oracle {{.Oracle}} violated{{else}}the run failed{{end}}:</strong> {{.Message}}<details><summary>the failure report</summary><pre>{{.Report}}</pre></details></div>
{{- end}}
{{- with .Lesson}}
<h2>The pipeline{{if $.Run.Scenario.Pipeline}} (this lesson is about the highlighted parts){{end}}</h2>
{{$.Pipeline}}
<h2>Try it</h2>
<div class="try"><pre>informersim explain {{$.Run.Scenario.Name}}
informersim run {{$.Run.Scenario.Name}} --seed 7 --html run.html   # another interleaving, as a timeline
informersim run {{$.Run.Scenario.Name}} --json                      # the complete record (docs/run.schema.json)</pre></div>
{{- end}}
<h2>Timeline</h2>
<p class="meta">One lane per component. Hover over an event for its narration line; click one (or pick an object) to follow that object through every lane; zoom with − / + / fit or ctrl+wheel.</p>
<div id="timeline" class="tl"></div>
{{- if not .Lesson}}
<h2>Legend: the pipeline, by client-go's names</h2>
{{.Pipeline}}
{{- end}}
<h2>Verdicts</h2>
<ul class="verdicts">{{range .Run.Verdicts}}<li>{{if .OK}}<span class="verdict-ok">ok</span>{{else}}<span class="verdict-bad">violated</span>{{end}} <code>{{.Oracle}}</code> ({{.Kind}}): {{.Doc}}{{if .Violation}} — <strong>{{.Violation}}</strong>{{end}}</li>{{end}}</ul>
{{- with .Lesson}}
<h2>The narrated run</h2>
{{range .Narration}}{{if .Caption}}<h3>{{.Caption}}</h3>{{end}}<pre class="narration">{{.Text}}</pre>
{{end}}
{{- end}}
<p class="meta">Replay: <code>{{.Run.Replay}}</code></p>
</main>
<script id="run-data" type="application/json">{{.Data}}</script>
<script>{{.Script}}</script>
</body>
</html>
`))

// WriteHTML writes the run's timeline as one self-contained HTML page.
func (r *Run) WriteHTML(w io.Writer) error {
	return r.writePage(w, nil)
}

func (r *Run) writePage(w io.Writer, l *lesson) error {
	if r == nil {
		return fmt.Errorf("timeline: no run")
	}
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	title := r.Scenario.Name + " · informersim timeline"
	if l != nil {
		title = fmt.Sprintf("Lesson %s: %s · informersim course", l.Number, r.Scenario.Title)
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, page{
		Title: title, Run: r, Data: template.JS(data), Pipeline: template.HTML(PipelineSVG(r.Scenario.Pipeline)),
		Style: template.CSS(styleSheet), Script: template.JS(script), Lesson: l,
	})
	if err != nil {
		return err
	}
	_, err = w.Write(b.Bytes())
	return err
}

// paragraphs splits a concept text at its blank lines.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if p = strings.Join(strings.Fields(p), " "); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// narratedSections renders the run's directives as the command line's narration, cut at its captions.
func narratedSections(r *Run) []section {
	var out []section
	var b strings.Builder
	caption := ""
	flush := func() {
		if t := strings.TrimRight(b.String(), "\n"); t != "" || caption != "" {
			out = append(out, section{Caption: caption, Text: t})
		}
		b.Reset()
	}
	for _, d := range r.Directives {
		if d.Cmd == "caption" {
			flush()
			caption = d.Caption
			continue
		}
		fmt.Fprintf(&b, "> %s\n", d.Line)
		if d.Output != "" {
			b.WriteString(d.Output)
			b.WriteByte('\n')
		}
	}
	flush()
	return out
}
