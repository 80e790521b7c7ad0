// Package browser holds the checks of the pictures of runs that need more than Go: the timeline
// pages and the course site (package timeline) opened in a real headless Chromium through
// chromedp, and the run record validated against its JSON Schema (docs/run.schema.json). It is a
// nested module so the main module gains neither dependency.
//
// The browser test needs Debian's chromium at /usr/bin/chromium (or $CHROMIUM): `make test`
// installs it when it is missing and it can (as root, with apt-get), and otherwise fails with
// the command that installs it. It never skips.
package browser
