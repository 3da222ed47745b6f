//go:build noconsole

// Package console is left out of this build (-tags noconsole): the API is
// served without it.
package console

import "github.com/valyala/fasthttp"

// Included reports whether the console is in this build.
const Included = false

// Prefix is where the console would be served.
const Prefix = "/admin/"

// Handler returns nil: there is no console in this build.
func Handler(creativeOrigin string) fasthttp.RequestHandler { return nil }
