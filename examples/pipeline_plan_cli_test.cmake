# Runs pipeline_plan and checks its command-line contract against PipeDream's own output on
# vgg16 (reference note on PipeDream's optimizer, section 6).
# cmake -DPROGRAM=<pipeline_plan> -DFIXTURES=<tests/fixtures/pipedream> -P pipeline_plan_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

# PipeDream: vgg16 -n 4 --activation_compression_ratio 1 -> 40 states, [0,17) x 3, [17,40) x 1,
# 0.205520896 s per minibatch.
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 4 --activation-compression-ratio 1 --json)
expect("vgg16: exit code ${code}" code EQUAL 0)
string(JSON time GET "${out}" plan time_per_minibatch_s)
string(JSON states GET "${out}" details num_states)
string(JSON end0 GET "${out}" plan stages 0 end_state)
string(JSON reps0 GET "${out}" plan stages 0 replicas)
string(JSON reps1 GET "${out}" plan stages 1 replicas)
expect("vgg16: time ${time}" time GREATER 0.2055208 AND time LESS 0.2055210)
expect("vgg16: ${states} states" states EQUAL 40)
expect("vgg16: stages end ${end0} with ${reps0} and ${reps1} replicas" end0 EQUAL 17 AND reps0 EQUAL 3 AND reps1 EQUAL 1)

# The readable output names the time as PipeDream does.
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 4 --activation-compression-ratio 1)
string(FIND "${out}" "Time per stage in pipeline: 0.205520896" at)
expect("vgg16: no time line in the table" NOT at EQUAL -1)

# Tables over the default node budget (40 states x 300,000 machines, with transfers: the general
# solver), and the wide path, which takes over within what is left of the budget, over it too
# (M^2): no partition found, the limit and both reasons printed, exit 0; status no_plan_found.
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 300000 --activation-compression-ratio 1)
expect("node budget: exit code ${code}" code EQUAL 0)
expect_printed("node budget" "Total number of states: 40 (the recurrence stopped at its budget; the wide path's answer: 40 layers")
expect_printed("node budget" "No partition found, limit: nodes (the partition of 40 states needs tables of")
expect_printed("node budget" "the wide path on 300000 machines needs M^2 = 9e+10 nodes")
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 300000 --activation-compression-ratio 1 --json)
string(JSON status GET "${out}" status)
string(JSON limit GET "${out}" limit)
string(JSON plan TYPE "${out}" plan)
expect("node budget --json: status ${status}, limit ${limit}, plan ${plan}"
       status STREQUAL "no_plan_found" AND limit STREQUAL "nodes" AND plan STREQUAL "NULL")

# Malformed command lines and files: one line on stderr, exit 2, nothing on stdout.
expect_malformed("-n;4" "--pipedream-graph;${FIXTURES}/vgg16.txt" "--pipedream-graph;${FIXTURES}/vgg16.txt;-n;four"
                 "--pipedream-graph;${FIXTURES}/vgg16.txt;-n;4;--colour" "--pipedream-graph;${FIXTURES}/vgg16.txt;-n;4;-b;-1"
                 "--pipedream-graph;${FIXTURES}/README.md;-n;4" "--pipedream-graph;/nonexistent.txt;-n;4"
                 "--pipedream-graph;${FIXTURES}/../cli/empty.txt;-n;4" "--pipedream-graph;${FIXTURES}/vgg16.txt;-n;4;--max-states;-1"
                 "--pipedream-graph;${FIXTURES}/vgg16.txt;-n;4;--max-states;many")

# A graph over max_states (20,000) antichain states takes the wide path: inception_v3 (221,564
# states) on a straight pipeline of 4 machines, where its bounds meet at 0.177874 s (the design
# note's prototype, docs/design/pipedream-wide-graphs.md, section 4); nasnetalarge (5.8e12
# states) on 16 machines, a partition with its proven lower bound.
run(--pipedream-graph "${FIXTURES}/inception_v3.txt" -n 4 --straight-pipeline --json)
expect("inception_v3: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON enumerated GET "${out}" details states_enumerated)
string(JSON time GET "${out}" plan time_per_minibatch_s)
expect("inception_v3 straight 4: status ${status}, states enumerated ${enumerated}, time ${time}"
       status STREQUAL "optimal" AND enumerated STREQUAL "OFF" AND time GREATER 0.1778739 AND time LESS 0.1778741)
# --max-states: vgg16 (40 states) sent to the wide path gets the exact path's answer, 0.175732624 s
# without transfers, proven optimal; over the exact path's limit is the command line's error.
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 4 --max-states 0 --json)
string(JSON status GET "${out}" status)
string(JSON enumerated GET "${out}" details states_enumerated)
string(JSON counted GET "${out}" details num_states)
string(JSON time GET "${out}" plan time_per_minibatch_s)
expect("vgg16 --max-states 0: exit code ${code}, status ${status}, states enumerated ${enumerated} (${counted} counted), time ${time}"
       code EQUAL 0 AND status STREQUAL "optimal" AND enumerated STREQUAL "OFF" AND counted EQUAL 40 AND time GREATER 0.1757326
       AND time LESS 0.1757327)
run(--pipedream-graph "${FIXTURES}/vgg16.txt" -n 4 --max-states 0)
expect_printed("vgg16 --max-states 0" "Total number of states: 40 (counted, not enumerated: --max-states 0; 40 layers")
run(--pipedream-graph /nonexistent.txt -n 4 --max-states 100001)
string(FIND "${err}" "max_states = 100001: expected at most 100000" at)
string(FIND "${err}" "nonexistent" file_named)
string(LENGTH "${out}" printed)
expect("--max-states 100001: exit code ${code}, the field named at ${at}, the file at ${file_named}, ${printed} bytes on stdout"
       code EQUAL 2 AND NOT at EQUAL -1 AND file_named EQUAL -1 AND printed EQUAL 0)
run(--pipedream-graph "${FIXTURES}/nasnetalarge.txt" -n 16)
expect("nasnetalarge: exit code ${code}" code EQUAL 0)
expect_printed("nasnetalarge" "Total number of states: more than 20000 (not enumerated")
expect_printed("nasnetalarge" "Proven lower bound: ")
