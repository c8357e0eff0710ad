// Command canary calls a function with a known vulnerability, so that
// hack/vulncheck.sh can prove its database finds one. It is never built
// into anything.
package main

import (
	"fmt"

	"golang.org/x/text/language"
)

func main() {
	tags, _, err := language.ParseAcceptLanguage("en-US,en;q=0.9")
	fmt.Println(tags, err)
}
