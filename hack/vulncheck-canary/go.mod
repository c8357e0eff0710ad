// The canary of hack/vulncheck.sh: a program that calls a function with a
// known vulnerability (GO-2022-1059, golang.org/x/text/language's
// ParseAcceptLanguage before v0.3.8), on purpose. govulncheck must find it
// before its clean answer on the project's own modules is trusted: a
// database that does not see this sees nothing.
module canary

go 1.23

require golang.org/x/text v0.3.7
