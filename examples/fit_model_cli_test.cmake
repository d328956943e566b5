# Runs the fit_model program and checks its command-line contract.
# cmake -DPROGRAM=<fit_model> -DFIXTURES=<tests/fixtures/pollux> -P fit_model_cli_test.cmake

include("${CMAKE_CURRENT_LIST_DIR}/cli_support.cmake")

get_filename_component(program_dir "${PROGRAM}" DIRECTORY)
set(params_file "${program_dir}/fit_model_cli_test_params.json")

# fit --json: the parameters and the fit quality.
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --gpus-per-node 4 --json)
expect("fit: exit code ${code}" code EQUAL 0)
string(JSON gamma GET "${out}" params gamma)
string(JSON samples GET "${out}" quality samples)
string(JSON median GET "${out}" quality median_ape_ratio)
expect("fit: gamma ${gamma} outside [1, 10]" gamma GREATER_EQUAL 1 AND gamma LESS_EQUAL 10)
expect("fit: ${samples} samples, expected 60" samples EQUAL 60)
expect("fit: training median APE ${median} above 0.1" median LESS 0.1)
file(WRITE "${params_file}" "${out}")
# The default chooses the form by cross-validation (and says so); --variant pollux does not.
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --gpus-per-node 4)
expect_printed("fit, default form (text)" "cross-validation" "CV median APE")
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --gpus-per-node 4 --variant pollux)
string(FIND "${out}" "cross-validation" at)
expect("fit --variant pollux (text): printed a cross-validation it should not have run" at EQUAL -1)

# predict --json: one prediction per row, in order, lower <= value <= upper.
run(predict --model sync-data-parallel --params "${params_file}" --pollux-placements "${FIXTURES}/cifar10-test.csv" --json)
expect("predict: exit code ${code}" code EQUAL 0)
string(JSON count LENGTH "${out}" predictions)
expect("predict: ${count} predictions, expected 20" count EQUAL 20)
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
    string(JSON value GET "${out}" predictions ${i} step_time_s)
    string(JSON lower GET "${out}" predictions ${i} lower_s)
    string(JSON upper GET "${out}" predictions ${i} upper_s)
    expect("predict: row ${i}: ${lower} <= ${value} <= ${upper} fails" lower LESS value AND value LESS upper)
endforeach()
# The first test row (placement 1134, local_bsz 45) measured 0.1336 s.
string(JSON first GET "${out}" predictions 0 step_time_s)
expect("predict: first row predicted ${first} s, measured 0.1336 s" first GREATER 0.11 AND first LESS 0.16)

# The readable forms.
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --gpus-per-node 4)
expect("fit (text): exit code ${code}" code EQUAL 0)
expect_printed("fit (text)" "alpha_c_s" "gamma" "median APE")

# fidelity: the seeded split is deterministic.
run(fidelity --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --train-fraction 0.5 --seed 3 --json)
expect("fidelity: exit code ${code}" code EQUAL 0)
string(JSON train GET "${out}" train_samples)
string(JSON test GET "${out}" test_samples)
string(JSON median1 GET "${out}" median_ape_ratio)
expect("fidelity: split ${train}/${test}, expected 30/30" train EQUAL 30 AND test EQUAL 30)
run(fidelity --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --train-fraction 0.5 --seed 3 --json)
string(JSON median2 GET "${out}" median_ape_ratio)
expect("fidelity: not deterministic (${median1} vs ${median2})" median1 STREQUAL median2)

# Malformed input: one line naming the line or field, exit 2.
function(expect_rejected what needle)
    expect_malformed("${ARGN}")
    string(FIND "${err}" "${needle}" at)
    expect("${what}: stderr does not name ${needle}" NOT at EQUAL -1)
endfunction()
set(fit_args fit --model sync-data-parallel --gpus-per-node 4 --pollux-placements)
expect_rejected("bad digit" "line 3" ${fit_args} "${FIXTURES}/bad_digit.csv")
expect_rejected("bad digit" "field placement" ${fit_args} "${FIXTURES}/bad_digit.csv")
expect_rejected("truncated" "line 3" ${fit_args} "${FIXTURES}/truncated.csv")
expect_rejected("no header" "line 1" ${fit_args} "${FIXTURES}/no_header.csv")
expect_rejected("missing file" "cannot open" ${fit_args} /nonexistent/train.csv)
expect_rejected("unknown model" "--model" fit --model nope --pollux-placements "${FIXTURES}/cifar10-train.csv")
expect_rejected("unknown flag" "--no-such-flag" fit --model sync-data-parallel --no-such-flag 1)
expect_rejected("bad gpus" "--gpus-per-node" ${fit_args} "${FIXTURES}/cifar10-train.csv" --gpus-per-node x)
expect_rejected("params not a fit" "parse error at byte" predict --model sync-data-parallel --params "${FIXTURES}/cifar10-train.csv"
                --pollux-placements "${FIXTURES}/cifar10-test.csv")
expect_rejected("missing --params" "--params" predict --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-test.csv")
expect_rejected("bad fraction" "--train-fraction" fidelity --model sync-data-parallel
                --pollux-placements "${FIXTURES}/cifar10-train.csv" --train-fraction 1.5)

# --variant (fit/sync_data_parallel.hpp sync_variant): recorded in the params, used by predict.
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --gpus-per-node 4
    --variant node-term+batch-power --json)
expect("fit --variant: exit code ${code}" code EQUAL 0)
string(JSON variant GET "${out}" variant)
string(JSON rows LENGTH "${out}" covariance)
string(JSON exponent GET "${out}" params batch_exponent)
expect("fit --variant: variant ${variant}" variant STREQUAL "node-term+batch-power")
expect("fit --variant: ${rows} covariance rows, expected 9" rows EQUAL 9)
expect("fit --variant: batch_exponent ${exponent} outside [0.25, 4]" exponent GREATER_EQUAL 0.25 AND exponent LESS_EQUAL 4)
file(WRITE "${params_file}" "${out}")
run(predict --model sync-data-parallel --params "${params_file}" --pollux-placements "${FIXTURES}/cifar10-test.csv" --json)
expect("predict (variant): exit code ${code}" code EQUAL 0)
string(JSON count LENGTH "${out}" predictions)
expect("predict (variant): ${count} predictions, expected 20" count EQUAL 20)
string(JSON first GET "${out}" predictions 0 step_time_s)
expect("predict (variant): first row predicted ${first} s, measured 0.1336 s" first GREATER 0.11 AND first LESS 0.16)
run(predict --model sync-data-parallel --params "${params_file}" --pollux-placements "${FIXTURES}/cifar10-test.csv"
    --variant node-term+batch-power)
expect("predict --variant (matching): exit code ${code}" code EQUAL 0)
expect_rejected("predict --variant (not matching)" "does not match" predict --model sync-data-parallel
                --params "${params_file}" --pollux-placements "${FIXTURES}/cifar10-test.csv" --variant pollux)
expect_rejected("bad variant" "--variant" ${fit_args} "${FIXTURES}/cifar10-train.csv" --variant nodes)
# auto: chosen by cross-validation inside the training rows, deterministic.
run(fidelity --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --train-fraction 0.5 --seed 3
    --variant auto --json)
expect("fidelity --variant auto: exit code ${code}" code EQUAL 0)
string(JSON chosen GET "${out}" selection chosen)
string(JSON variant GET "${out}" variant)
string(JSON scores LENGTH "${out}" selection scores)
expect("fidelity --variant auto: chose ${chosen}, fitted ${variant}" chosen STREQUAL variant)
expect("fidelity --variant auto: ${scores} scores, expected 4" scores EQUAL 4)
run(fit --model sync-data-parallel --pollux-placements "${FIXTURES}/cifar10-train.csv" --variant auto)
expect("fit --variant auto (text): exit code ${code}" code EQUAL 0)
expect_printed("fit --variant auto (text)" "cross-validation" "CV median APE")

# --model ps-async (examples/fit_model_ps_async.hpp) on the transient-training fixtures.
set(transient "${FIXTURES}/../transient")
run(fit --model ps-async --clusters "${transient}/homogeneous.json" --json)
expect("ps-async fit: exit code ${code}" code EQUAL 0)
file(WRITE "${params_file}" "${out}")
run(predict --model ps-async --params "${params_file}" --clusters "${transient}/mixed.json" --json)
expect("ps-async predict: exit code ${code}" code EQUAL 0)
string(JSON count LENGTH "${out}" predictions)
expect("ps-async predict: ${count} predictions, expected 3" count EQUAL 3)
file(READ "${params_file}" params)
string(JSON contention GET "${params}" contention_model)
expect("ps-async fit: default contention_model ${contention}" contention STREQUAL "load")
# --contention spotdnn: the paper's eqs. (8)-(9), recorded in the params.
run(fit --model ps-async --contention spotdnn --clusters "${transient}/homogeneous.json" --json)
expect("ps-async spotdnn fit: exit code ${code}" code EQUAL 0)
string(JSON contention GET "${out}" contention_model)
expect("ps-async spotdnn fit: contention_model ${contention}" contention STREQUAL "spotdnn")
# --contention load (model/ps_load_contention.hpp): recorded in the params, used by predict.
run(fit --model ps-async --contention load --clusters "${transient}/homogeneous.json" --json)
expect("ps-async load fit: exit code ${code}" code EQUAL 0)
string(JSON contention GET "${out}" contention_model)
expect("ps-async load fit: contention_model ${contention}" contention STREQUAL "load")
file(WRITE "${params_file}" "${out}")
run(predict --model ps-async --params "${params_file}" --clusters "${transient}/mixed.json" --json)
expect("ps-async load predict: exit code ${code}" code EQUAL 0)
foreach(i RANGE 2)
    string(JSON ape GET "${out}" predictions ${i} ape_ratio)
    expect("ps-async load predict: mix ${i} APE ${ape} above 0.05" ape LESS 0.05)
endforeach()
run(fit --model ps-async --contention load --clusters "${transient}/homogeneous.json")
expect_printed("ps-async load fit (text)" "load contention" "B_ps")
# fidelity: leave-one-cluster-out on the homogeneous runs.
run(fidelity --model ps-async --contention load --clusters "${transient}/homogeneous.json" --json)
expect("ps-async fidelity: exit code ${code}" code EQUAL 0)
string(JSON median GET "${out}" median_ape_ratio)
expect("ps-async fidelity: leave-one-out median APE ${median} above 0.05" median LESS 0.05)
expect_rejected("ps-async bad --contention" "--contention" fit --model ps-async --contention nope
                --clusters "${transient}/homogeneous.json")
expect_rejected("ps-async fidelity, too few clusters" "samples" fidelity --model ps-async --clusters "${transient}/mixed.json")
expect_rejected("ps-async with a sync flag" "--pollux-placements" fit --model ps-async
                --pollux-placements "${FIXTURES}/cifar10-train.csv")
file(REMOVE "${params_file}")
