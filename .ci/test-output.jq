# Reads `go test -json` (jq -nrj) and prints what plain `go test` prints:
# each package's result, a build's errors, and the output of each test
# that failed (held until the test ends, dropped when it passes).
foreach inputs as $e ({held: {}, out: null};
  ($e.Package + " " + ($e.Test // "")) as $k
  | if $e.Action == "build-output" then .out = $e.Output
    elif $e.Action == "output" and $e.Test == null then
      .out = (if $e.Output == "PASS\n" then null else $e.Output end)
    elif $e.Action == "output" then .held[$k] += $e.Output | .out = null
    elif $e.Action == "fail" and $e.Test != null then .out = .held[$k] | del(.held[$k])
    elif ($e.Action == "pass" or $e.Action == "skip") and $e.Test != null then .out = null | del(.held[$k])
    else .out = null end;
  .out // empty)
