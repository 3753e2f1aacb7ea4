# Reads `go test -json` (jq -r) and prints, for each test and subtest that
# ended, its seconds, result, package and name, tab-separated.
select((.Action == "pass" or .Action == "fail") and .Test != null)
| "\(.Elapsed)\t\(.Action)\t\(.Package | sub("^github.com/plasmactl/plasma-node/?"; "") | if . == "" then "." else . end)\t\(.Test)"
