# Runs resilience_plan and checks its command-line contract: simulate on a trace (Bamboo's worked
# example) and in random mode (Bamboo's seeds), with a target of steps and a duration, and under the
# deprecated --model; checkpoint; plan on the bundled problem and on a file (with its SVG, and with
# the deprecated key "model"), a deadline nothing can meet, and malformed input.
# cmake -DPROGRAM=<resilience_plan> -DFIXTURES=<tests/fixtures> -P resilience_plan_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")
set(work "${CMAKE_CURRENT_BINARY_DIR}/resilience_plan_cli")
file(MAKE_DIRECTORY "${work}")

# ---- simulate --trace: Bamboo's worked example, GPT-2 on the p3 trace --------------------------
run(simulate --trace "${FIXTURES}/bamboo/p3-trace.csv" --workload gpt2 --json)
expect("simulate --trace: exit code ${code}" code EQUAL 0)
string(JSON preemptions GET "${out}" preemptions)
string(JSON fatal GET "${out}" fatal_failures)
string(JSON steps GET "${out}" steps)
string(JSON usd GET "${out}" usd_per_h)
string(JSON od_usd GET "${out}" on_demand_usd_per_h)
expect("simulate --trace: ${preemptions} preemptions, expected 167" preemptions EQUAL 167)
expect("simulate --trace: ${fatal} fatal failures, expected 6" fatal EQUAL 6)
expect("simulate --trace: ${steps} steps, expected 30143" steps EQUAL 30143)
expect("simulate --trace: ${usd} USD/h, expected 21.9025" usd GREATER 21.9024 AND usd LESS 21.9025)
expect("simulate --trace: on-demand ${od_usd} USD/h, expected 97.92" od_usd EQUAL 97.92)
foreach(key average_instances samples_per_s value on_demand_samples_per_s on_demand_value)
    string(JSON type ERROR_VARIABLE missing TYPE "${out}" ${key})
    expect("simulate --trace --json: no key ${key}" NOT missing)
endforeach()
run(simulate --trace "${FIXTURES}/bamboo/g4dn-trace.csv" --workload vgg)
expect("simulate --trace (text): exit code ${code}" code EQUAL 0)
expect_printed("simulate --trace (text)" "status: completed" "preemptions:       74" "fatal failures:    3" "steps:             5991")
# --model: the deprecated spelling of --workload, the same run.
run(simulate --trace "${FIXTURES}/bamboo/g4dn-trace.csv" --model vgg)
expect("simulate --model (deprecated): exit code ${code}" code EQUAL 0)
expect_printed("simulate --model (deprecated)" "preemptions:       74" "steps:             5991")

# ---- simulate with a target of steps and a duration ----------------------------------------------
run(simulate --trace "${FIXTURES}/bamboo/p3-trace.csv" --workload gpt2 --target-steps 1000 --json)
expect("simulate --target-steps: exit code ${code}" code EQUAL 0)
string(JSON steps GET "${out}" steps)
expect("simulate --target-steps 1000: ${steps} steps" steps EQUAL 1000)
run(simulate --trace "${FIXTURES}/bamboo/p3-trace.csv" --workload gpt2 --duration-h 2 --json)
expect("simulate --duration-h: exit code ${code}" code EQUAL 0)
string(JSON steps GET "${out}" steps)
expect("simulate --duration-h 2: ${steps} steps, expected some but fewer than in 12 h (30143)" steps GREATER 0 AND steps LESS 30143)
# Bamboo's random-mode table: runs of 22,194 steps (seed 1 makes 33,761 in 12 h, so it gets there).
run(simulate --removal-probability 0.05 --seeds 1-2 --workload gpt2 --target-steps 22194 --duration-h 24 --json)
expect("simulate random --target-steps: exit code ${code}" code EQUAL 0)
string(JSON steps1 GET "${out}" per_seed 0 steps)
string(JSON mean GET "${out}" mean steps)
expect("simulate random --target-steps 22194: seed 1 ran ${steps1} steps" steps1 EQUAL 22194)
expect("simulate random --target-steps 22194: mean ${mean} steps" mean EQUAL 22194)

# ---- simulate in random mode: Bamboo's seeds 1-3 -------------------------------------------------
run(simulate --removal-probability 0.05 --seeds 1-3 --workload gpt2 --json)
expect("simulate random: exit code ${code}" code EQUAL 0)
string(JSON runs GET "${out}" runs)
string(JSON seed1 GET "${out}" per_seed 0 preemptions)
string(JSON steps1 GET "${out}" per_seed 0 steps)
string(JSON mean GET "${out}" mean preemptions)
string(JSON lower GET "${out}" interval_95 preemptions 0)
string(JSON upper GET "${out}" interval_95 preemptions 1)
expect("simulate random: ${runs} runs" runs EQUAL 3)
expect("simulate random: seed 1 has ${seed1} preemptions and ${steps1} steps, expected 26 and 33761"
       seed1 EQUAL 26 AND steps1 EQUAL 33761)
expect("simulate random: mean ${mean} preemptions, expected 28 (26, 29, 29)" mean EQUAL 28)
expect("simulate random: interval [${lower}, ${upper}] around ${mean}" lower LESS mean AND upper GREATER mean)
run(simulate --removal-probability 0.05 --seeds 1-2 --workload bert)
expect("simulate random (text): exit code ${code}" code EQUAL 0)
expect_printed("simulate random (text)" "2 of 2 runs completed" "samples_per_s" "95% interval of the mean")

# ---- checkpoint ----------------------------------------------------------------------------------
run(checkpoint --work-h 10 --interval-h 1 --checkpoint-h 0.1 --restart-h 0.2 --preemptions-per-h 0.1 --deadline-h 14 --json)
expect("checkpoint: exit code ${code}" code EQUAL 0)
string(JSON expected_h GET "${out}" expected_h)
string(JSON p GET "${out}" p_meet_deadline)
string(JSON young GET "${out}" young_interval_h)
string(JSON daly GET "${out}" daly_interval_h)
string(JSON status GET "${out}" status)
string(JSON reason GET "${out}" reason)
string(JSON note GET "${out}" note)
string(LENGTH "${reason}" reason_length)
expect("checkpoint: status ${status}, reason \"${reason}\"" status STREQUAL "optimal" AND reason_length EQUAL 0)
expect("checkpoint: note \"${note}\"" note MATCHES "interval_h was given")
# Daly: E[T] = exp(lambda R) / lambda (exp(lambda (tau + delta)) - 1) W / tau = 11.8627 h.
expect("checkpoint: E[T] ${expected_h}, expected 11.8627 h" expected_h GREATER 11.8626 AND expected_h LESS 11.8628)
expect("checkpoint: P ${p}, expected in (0.9, 1)" p GREATER 0.9 AND p LESS 1)
expect("checkpoint: Young ${young}, expected sqrt(2 x 0.1 / 0.1) = 1.41421" young GREATER 1.41421 AND young LESS 1.41422)
expect("checkpoint: Daly ${daly} below Young ${young}" daly LESS young)
run(checkpoint --work-h 10 --interval-h 1 --checkpoint-h 0.1 --restart-h 0.2 --preemptions-per-h 0 --deadline-h 14)
expect("checkpoint without preemptions: exit code ${code}" code EQUAL 0)
expect_printed("checkpoint without preemptions" "P(T <= 14 h):     1" "none (no preemptions)")

# ---- plan ----------------------------------------------------------------------------------------
run(plan --json --svg "${work}/plan.svg")
expect("plan: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON strategy GET "${out}" plan strategy)
string(JSON p GET "${out}" plan p_meet_deadline)
string(JSON count LENGTH "${out}" details strategies)
expect("plan: status ${status}" status STREQUAL "feasible")
expect("plan: strategy ${strategy}" strategy STREQUAL "redundant_computation")
expect("plan: P ${p} below q = 0.9" p GREATER_EQUAL 0.9)
expect("plan: ${count} strategies reported" count EQUAL 4)
# On-demand runs the spot strategies' layout: one pipeline of 12 instances, 6,250 steps of 1.2 s,
# 2.0833 h x 12 x 3.06 USD/h = 76.5 USD (Bamboo's 32-instance baseline cost 572.9 USD). The
# fallback (the deadline policy) keeps the deadline on every run and costs less than on-demand.
string(JSON od_strategy GET "${out}" details strategies 0 strategy)
string(JSON od_instances GET "${out}" details strategies 0 instances)
string(JSON od_usd GET "${out}" details strategies 0 expected_usd)
string(JSON fb_strategy GET "${out}" details strategies 3 strategy)
string(JSON fb_p GET "${out}" details strategies 3 p_meet_deadline)
string(JSON fb_usd GET "${out}" details strategies 3 expected_usd)
string(JSON simulations GET "${out}" details simulations)
expect("plan: ${od_strategy} on ${od_instances} instances for ${od_usd} USD, expected on_demand on 12 for 76.5"
       od_strategy STREQUAL "on_demand" AND od_instances EQUAL 12 AND od_usd GREATER 76.4999 AND od_usd LESS 76.5001)
expect("plan: ${fb_strategy} P ${fb_p} for ${fb_usd} USD, expected spot_with_fallback, 1, 45.62 (below on-demand's 76.5)"
       fb_strategy STREQUAL "spot_with_fallback" AND fb_p EQUAL 1 AND fb_usd GREATER 45.61 AND fb_usd LESS 45.63)
expect("plan: ${simulations} simulations, expected 800 (2 pipeline counts x 200 runs x Bamboo and the policy)" simulations EQUAL 800)
file(READ "${work}/plan.svg" svg)
string(FIND "${svg}" "<svg" at)
expect("plan --svg: no picture" at EQUAL 0)
string(FIND "${svg}" "checkpoint_restart" at)
expect("plan --svg: no legend" NOT at EQUAL -1)
run(plan)
expect("plan (text): exit code ${code}" code EQUAL 0)
expect_printed("plan (text)" "status: feasible" "redundant_computation" "spot_with_fallback" "lost:" "plan: redundant_computation")

# A problem file whose trace is read relative to it; then a q nothing meets (a status, exit 0).
file(COPY "${FIXTURES}/bamboo/g4dn-trace.csv" DESTINATION "${work}")
set(problem [=[{
  "job": {"workload": "vgg", "work_samples": 1500000, "deadline_h": 8, "probability": 0.9, "checkpoint_h": 0.05},
  "offers": [{"name": "g4dn.12xlarge", "spot_usd_per_h": 1.17, "on_demand_usd_per_h": 3.91, "max_instances": 24,
              "preemption": {"trace_csv": "g4dn-trace.csv"}}],
  "options": {"samples": 40}
}]=])
file(WRITE "${work}/problem.json" "${problem}")
run(plan "${work}/problem.json" --json)
expect("plan FILE: exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON figures GET "${out}" figures)
string(JSON samples GET "${out}" estimate samples)
expect("plan FILE: status ${status}" status STREQUAL "feasible")
expect("plan FILE: figures ${figures}, estimated over ${samples} runs" figures STREQUAL "estimated" AND samples EQUAL 40)
set(plan_file_out "${out}")
# The deprecated key "model": the same problem, the same answer.
string(REPLACE "\"workload\": \"vgg\"" "\"model\": \"vgg\"" old_key "${problem}")
file(WRITE "${work}/old-key.json" "${old_key}")
run(plan "${work}/old-key.json" --json)
expect("plan with \"model\" (deprecated): exit code ${code}" code EQUAL 0)
string(JSON a GET "${plan_file_out}" objective_value)
string(JSON b GET "${out}" objective_value)
expect("plan with \"model\" (deprecated): ${b}, expected ${a}" a STREQUAL b)
# Half an hour: VGG's fastest pipeline layout needs 2.98 h without a preemption (on spot or
# on-demand), checkpoint-restart's layout 2.39 h: proven infeasible (a status, exit 0), the
# likeliest configuration named.
string(REPLACE "\"deadline_h\": 8" "\"deadline_h\": 0.5" impossible "${problem}")
file(WRITE "${work}/impossible.json" "${impossible}")
run(plan "${work}/impossible.json" --json)
expect("plan (infeasible): exit code ${code}" code EQUAL 0)
string(JSON status GET "${out}" status)
string(JSON plan TYPE "${out}" plan)
string(JSON best_effort TYPE "${out}" best_effort)
expect("plan (infeasible): status ${status}" status STREQUAL "infeasible")
expect("plan (infeasible): plan ${plan}" plan STREQUAL "NULL")
expect("plan (infeasible): best_effort ${best_effort}" best_effort STREQUAL "OBJECT")
run(plan "${work}/impossible.json")
expect_printed("plan (infeasible, text)" "status: infeasible" "best effort:")

# ---- malformed input: exit 2, one line naming the field, nothing on stdout -----------------------
file(WRITE "${work}/unknown-event.csv" "0,add,node1\n60000,start,node2\n")
file(WRITE "${work}/unsorted.csv" "0,add,node1\n60000,add,node2\n30000,remove,node1\n")
string(REPLACE "\"probability\": 0.9" "\"probability\": 1.5" bad_q "${problem}")
file(WRITE "${work}/bad-q.json" "${bad_q}")
string(REPLACE "\"probability\": 0.9" "\"probability\": 0" zero_q "${problem}")
file(WRITE "${work}/zero-q.json" "${zero_q}")
string(REPLACE "\"trace_csv\": \"g4dn-trace.csv\"" "\"poisson\": {\"rate_per_instance_h\": -1}" negative_rate "${problem}")
file(WRITE "${work}/negative-rate.json" "${negative_rate}")
string(REPLACE "\"workload\": \"vgg\"" "\"workload\": \"gpt5\"" unknown_workload "${problem}")
file(WRITE "${work}/unknown-workload.json" "${unknown_workload}")
string(REPLACE "\"workload\": \"vgg\"" "\"workload\": \"vgg\", \"model\": \"vgg\"" both_keys "${problem}")
file(WRITE "${work}/both-keys.json" "${both_keys}")
string(REPLACE "g4dn-trace.csv" "unsorted.csv" unsorted_problem "${problem}")
file(WRITE "${work}/unsorted-trace.json" "${unsorted_problem}")
expect_malformed(
    ""
    "launch"
    "simulate;--trace;${work}/unknown-event.csv;--workload;gpt2"
    "simulate;--trace;${work}/unsorted.csv;--workload;gpt2"
    "simulate;--trace;${work}/missing.csv;--workload;gpt2"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--workload;gpt5"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--model;gpt5"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--workload;gpt2;--model;gpt2"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--workload;gpt2;--target-steps;0"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--workload;gpt2;--target-steps;many"
    "simulate;--trace;${FIXTURES}/bamboo/p3-trace.csv;--workload;gpt2;--duration-h;-1"
    "simulate;--removal-probability;2;--seeds;1-3;--workload;gpt2"
    "simulate;--removal-probability;0.05;--seeds;5-1;--workload;gpt2"
    "simulate;--removal-probability;0.05;--workload;gpt2"
    "checkpoint;--work-h;10;--interval-h;1;--checkpoint-h;0.1;--restart-h;0.2;--preemptions-per-h;-1;--deadline-h;14"
    "checkpoint;--work-h;10;--interval-h;1;--checkpoint-h;0.1;--restart-h;0.2;--deadline-h;14"
    "plan;${work}/bad-q.json"
    "plan;${work}/zero-q.json"
    "plan;${work}/negative-rate.json"
    "plan;${work}/unknown-workload.json"
    "plan;${work}/both-keys.json"
    "plan;${work}/unsorted-trace.json"
    "plan;${work}/missing.json")
run(plan "${work}/bad-q.json")
expect("plan with q = 1.5 names the field" err MATCHES "job.probability")
run(plan "${work}/unknown-workload.json")
expect("plan with an unknown workload names the field" err MATCHES "job.workload")
run(plan "${work}/both-keys.json")
expect("plan with both keys names the deprecated one" err MATCHES "job.model" AND err MATCHES "deprecated")
run(simulate --trace "${FIXTURES}/bamboo/p3-trace.csv" --workload gpt2 --target-steps 0)
expect("simulate with --target-steps 0 names the flag" err MATCHES "--target-steps")
run(plan "${work}/negative-rate.json")
expect("plan with a negative rate names the field" err MATCHES "offers\\[0\\].preemption.rate_per_instance_h")
run(checkpoint --work-h 10 --interval-h 1 --checkpoint-h 0.1 --restart-h 0.2 --preemptions-per-h -1 --deadline-h 14)
expect("checkpoint with a negative rate names the flag" err MATCHES "--preemptions-per-h")
run(simulate --trace "${work}/unknown-event.csv" --workload gpt2)
expect("an unknown event names its line and field" err MATCHES "line 2" AND err MATCHES "event")
