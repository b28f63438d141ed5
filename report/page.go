package report

import (
	_ "embed"
	"html/template"
)

var (
	//go:embed page.html
	pageHTML string
	//go:embed page.css
	pageCSS string
	//go:embed page.js
	pageJS string

	css = template.CSS(pageCSS)
	js  = template.JS(pageJS)

	funcs        = template.FuncMap{"add": func(a, b int) int { return a + b }}
	pageTemplate = template.Must(template.New("page").Funcs(funcs).Parse(pageHTML))
)
