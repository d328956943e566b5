# Runs hybrid_plan and checks its command-line contract: the table, --json, --svg, a profile and
# a catalog from files, an infeasible budget, and malformed input.
# cmake -DPROGRAM=<hybrid_plan> -DFIXTURES=<tests/fixtures/hybrid_plan> -P hybrid_plan_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

# The bundled vgg16 on the bundled V100 catalog: a table comparing the plan with pure data
# parallelism.
run()
expect("default: exit code ${code}" code EQUAL 0)
expect_printed(default "hybrid (pipeline + DP)" "pure data parallelism" "throughput" "samples per USD" "stages of the hybrid plan")

# --json: only a JSON object; pipelining beats data parallelism on vgg16 at 1 GB/s.
run(--json)
expect("--json: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" hybrid status)
string(JSON workers GET "${out}" hybrid plan workers)
string(JSON stages LENGTH "${out}" hybrid plan stages)
string(JSON hybrid_rate GET "${out}" hybrid plan samples_per_s)
string(JSON dp_rate GET "${out}" data_parallel plan samples_per_s)
string(JSON dp_stages LENGTH "${out}" data_parallel plan stages)
expect("--json: status ${status}" status STREQUAL "optimal")
expect("--json: ${workers} workers" workers GREATER 1 AND workers LESS_EQUAL 16)
expect("--json: ${stages} stages" stages GREATER 1)
expect("--json: data parallelism has ${dp_stages} stages" dp_stages EQUAL 1)
expect("--json: hybrid ${hybrid_rate} <= data parallel ${dp_rate} samples/s" hybrid_rate GREATER dp_rate)

# --svg: the schedule, one rectangle per forward and backward pass at least.
set(svg "${CMAKE_CURRENT_BINARY_DIR}/hybrid_plan_cli_test.svg")
file(REMOVE "${svg}")
run(--max-workers 4 --batch-sizes 128 --svg "${svg}")
expect("--svg: exit code ${code}" code EQUAL 0)
expect("--svg: no file ${svg}" EXISTS "${svg}")
file(READ "${svg}" drawing)
string(REGEX MATCHALL "<rect " boxes "${drawing}")
list(LENGTH boxes box_count)
string(FIND "${drawing}" "</svg>" closed)
expect("--svg: ${box_count} rectangles" box_count GREATER 32)
expect("--svg: not closed" NOT closed EQUAL -1)

# Every line of text ends inside the picture: its x plus its width at the font's size (a
# generous 6.2 px per character at 11 px, scaled for other sizes) is at most the picture's width.
# (The subtitle ran past the right edge before.)
string(REGEX MATCH "<svg [^>]*width=\"([0-9.]+)\"" svg_tag "${drawing}")
set(picture_width "${CMAKE_MATCH_1}")
string(REGEX MATCHALL "<text x=\"[0-9.]+\"[^>]*>[^<]*</text>" texts "${drawing}")
foreach(text IN LISTS texts)
    string(REGEX MATCH "<text x=\"([0-9.]+)\"" ignored "${text}")
    set(x "${CMAKE_MATCH_1}")
    if(text MATCHES "text-anchor=\"(middle|end)\"")
        continue()  # centred and right-aligned labels sit on the axis, inside by construction
    endif()
    set(size 11)
    if(text MATCHES "font-size=\"([0-9]+)\"")
        set(size "${CMAKE_MATCH_1}")
    endif()
    string(REGEX REPLACE "<text[^>]*>([^<]*)</text>" "\\1" content "${text}")
    string(LENGTH "${content}" characters)
    math(EXPR right "${x} + (${characters} * 62 * ${size}) / 110" OUTPUT_FORMAT DECIMAL)
    expect("--svg: \"${content}\" ends at ${right} px, past the picture's ${picture_width} px" right LESS_EQUAL ${picture_width})
endforeach()

# A profile and a catalog from files, with the per-dollar objective.
run("${FIXTURES}/../pipedream/alexnet.txt" --profile-batch 256 --containers "${FIXTURES}/containers.json"
    --max-workers 8 --batch-sizes 256,512 --objective samples-per-usd --json)
expect("files: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" hybrid status)
string(JSON container GET "${out}" hybrid plan container)
expect("files: status ${status}" status STREQUAL "optimal")
expect("files: container ${container}" container STREQUAL "small" OR container STREQUAL "large")

# A budget below one container: status infeasible with the reason, exit 0; no plan, and the
# cheapest plan (over the budget) as best_effort.
run(--objective samples-per-s --budget 1 --json)
expect("budget: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" hybrid status)
string(JSON limit GET "${out}" hybrid limit)
string(JSON reason GET "${out}" hybrid reason)
string(JSON plan TYPE "${out}" hybrid plan)
string(JSON effort_price GET "${out}" hybrid best_effort usd_per_h)
string(JSON effort_workers GET "${out}" hybrid best_effort workers)
expect("budget: status ${status}" status STREQUAL "infeasible")
expect("budget: limit ${limit}" limit STREQUAL "none")
expect("budget: a plan ${plan}" plan STREQUAL "NULL")
string(FIND "${reason}" "over the budget" at)
expect("budget: reason \"${reason}\"" NOT at EQUAL -1)
expect("budget: best_effort at ${effort_price} USD/h on ${effort_workers} workers, expected one GPU over 1 USD/h"
       effort_price GREATER 1 AND effort_workers EQUAL 1)
run(--objective samples-per-s --budget 1)
expect("budget table: exit code ${code}" code EQUAL 0)
expect_printed("budget table" "no hybrid plan: the cheapest plan costs"
               "best effort (misses the goal): 1 x v100x1, workers 1, stages 1, 190.3 samples/s, 3.06 USD/h")

# Malformed command lines and files: one line on stderr, exit 2, nothing on stdout.
expect_malformed("--colour" "--max-workers;x" "--max-workers;0" "--objective;fastest" "--objective;usd-per-h"
                 "--batch-sizes;128,,256" "--budget" "--containers;/nonexistent.json" "--containers;${FIXTURES}/zero_gpus.json"
                 "--containers;${FIXTURES}/truncated.json" "${FIXTURES}/truncated_graph.txt" "${FIXTURES}/README.md"
                 "/nonexistent.txt" "a.txt;b.txt")

# The error names the field.
run(--containers "${FIXTURES}/zero_gpus.json")
string(FIND "${err}" "containers[0].gpus = 0" at)
expect("zero gpus: the error does not name containers[0].gpus" NOT at EQUAL -1)
