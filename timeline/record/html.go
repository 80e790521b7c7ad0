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
	// Heading is the page's title on a page that is not a lesson's.
	Heading string
	// Paragraphs are the scenario's concept text, Narration its narrated directives.
	Paragraphs []string
	Narration  []section
	// Lesson, when set, makes the page a course page; Try are its replay commands.
	Lesson *lesson
	Try    []string
}

type lesson struct {
	Number     string
	Prev, Next string // file names of the neighbouring lessons, "" at the ends
	PrevTitle  string
	NextTitle  string
}

// section is a caption and the narration's lines up to the next caption.
type section struct {
	Caption   string
	Directive int // the caption's own directive, -1 before the first caption
	Lines     []narrationLine
}

// narrationLine is one directive as the command line narrates it: its line, then its output.
type narrationLine struct {
	Directive int
	Line      string
	Output    string
}

// TryIt are the commands a lesson page prints to replay it, run from the repository's root of a
// fresh clone (Go and make are all it needs: the command is a nested module, cmd/informersim).
func TryIt(name string) []string {
	return []string{
		"go run -C cmd/informersim . explain " + name,
		"go run -C cmd/informersim . run " + name + " --seed 7 --html \"$PWD/run.html\"",
		"go run -C cmd/informersim . run " + name + " --json > run.json",
	}
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
<h1>{{.Heading}}</h1>
{{- end}}
<p class="meta">scenario <code>{{.Run.Scenario.Name}}</code> · seed {{.Run.Seed}} · policy {{.Run.Policy}} · {{len .Run.Events}} trace events · trace sha256 <code>{{.Run.Trace.Hash}}</code> · {{if .Run.Passed}}<span class="verdict-ok">passed</span>{{else}}<span class="verdict-bad">failed</span>{{end}}{{if not .Run.Compared}} (expected blocks not compared: the seed or policy replaced the file's own){{end}}</p>
{{- if .Paragraphs}}
<section class="concept">{{range .Paragraphs}}<p>{{.}}</p>{{end}}</section>
{{- end}}
{{- with .Run.Failure}}
<div class="failure"><strong>{{if .Oracle}}oracle {{.Oracle}} violated{{else if .Check}}check “{{.Check}}” failed{{else}}the run failed{{end}}:</strong> {{.Message}}
{{- if or .Actor .Object}}<div class="about">{{if .Actor}}found at <code>{{.Actor}}</code>'s event, step {{.Step}}{{else}}found at step {{.Step}}{{end}}{{if .Object}}; about <code>{{.Object}}</code>, followed in the timeline below{{end}}</div>{{end}}
<details open><summary>the failure report, as the terminal printed it</summary><pre class="failure-report">{{.Report}}</pre></details></div>
{{- end}}
{{- with .Lesson}}
<h2>The pipeline{{if $.Run.Scenario.Pipeline}} (this lesson is about the highlighted parts){{end}}</h2>
{{$.Pipeline}}
<h2>Try it</h2>
<p class="meta">From the root of a clone of the repository (Go is all it needs):</p>
<div class="try"><pre>{{range $.Try}}{{.}}
{{end}}</pre></div>
{{- end}}
<h2>Timeline</h2>
<p class="meta">One lane per component; faults, errors, the violation and the followed object's events keep their labels; bars are durations; the strip above the lanes is the whole run (drag it to pan). Click an event (or Tab to it and press Enter) to follow its object through every lane{{if .Run.Directives}} and to find its narration line below; click a narration line to find its events{{end}}; click a box of the pipeline to light its lanes. Zoom with − / + / fit or ctrl+wheel; switch the time axis between compressed and linear.</p>
<div id="timeline" class="tl"></div>
{{- if not .Lesson}}
<h2>Legend: the pipeline, by client-go's names</h2>
{{.Pipeline}}
{{- end}}
<h2>Verdicts</h2>
{{- if not .Run.Verdicts}}
<p class="meta">No oracle was attached to this run (oracle.Attach): only its own checks judged it.</p>
{{- end}}
<ul class="verdicts">{{range .Run.Verdicts}}<li>{{if .OK}}<span class="verdict-ok">ok</span>{{else}}<span class="verdict-bad">violated</span>{{end}} <code>{{.Oracle}}</code> ({{.Kind}}): {{.Doc}}{{if .Violation}} — <strong>{{.Violation}}</strong>{{end}}</li>{{end}}</ul>
{{- if .Narration}}
<h2>The narrated run</h2>
<div class="narration-box">
{{- range .Narration}}{{if .Caption}}<h3 class="nl" data-directive="{{.Directive}}" tabindex="0">{{.Caption}}</h3>{{end}}
{{- range .Lines}}<div class="nl" data-directive="{{.Directive}}" tabindex="0"><span class="cmd">&gt; {{.Line}}</span>{{if .Output}}
{{.Output}}{{end}}</div>{{end}}
{{- end}}
</div>
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
	heading := r.Scenario.Name
	if r.Scenario.Title != "" {
		heading += ": " + r.Scenario.Title
	}
	if r.Scenario.Name == WorldName && r.Scenario.Title != "" {
		// A spec's run: its name is the spec's.
		heading = r.Scenario.Title
	}
	title := heading + " · informersim timeline"
	var try []string
	if l != nil {
		title = fmt.Sprintf("Lesson %s: %s · informersim course", l.Number, r.Scenario.Title)
		try = TryIt(r.Scenario.Name)
	}
	var b bytes.Buffer
	err = pageTemplate.Execute(&b, page{
		Title: title, Heading: heading, Run: r, Data: template.JS(data), Pipeline: template.HTML(PipelineSVG(r.Scenario.Pipeline)),
		Style: template.CSS(styleSheet), Script: template.JS(script), Lesson: l, Try: try,
		Paragraphs: paragraphs(r.Scenario.Concept), Narration: narratedSections(r),
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

// narratedSections renders the run's directives as the command line's narration, cut at its
// captions, each line knowing its directive (the page links it with the directive's events).
func narratedSections(r *Run) []section {
	var out []section
	cur := section{Directive: -1}
	for i, d := range r.Directives {
		if d.Cmd == "caption" {
			if cur.Caption != "" || len(cur.Lines) > 0 {
				out = append(out, cur)
			}
			cur = section{Caption: d.Caption, Directive: i}
			continue
		}
		cur.Lines = append(cur.Lines, narrationLine{Directive: i, Line: d.Line, Output: d.Output})
	}
	if cur.Caption != "" || len(cur.Lines) > 0 {
		out = append(out, cur)
	}
	return out
}
