# Shared by the examples' command-line tests (cmake -P scripts): run the program under test and
# check what it did. PROGRAM is the program's path.

# run(args...): sets code, out and err in the caller.
function(run)
    execute_process(COMMAND "${PROGRAM}" ${ARGN} RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
    set(code "${code}" PARENT_SCOPE)
    set(out "${out}" PARENT_SCOPE)
    set(err "${err}" PARENT_SCOPE)
endfunction()

# expect(<message> <condition...>): fails with the message and the program's output unless the
# condition (separate arguments, as for if()) holds.
function(expect message)
    if(NOT (${ARGN}))
        get_filename_component(name "${PROGRAM}" NAME)
        message(FATAL_ERROR "${name}: ${message}\n--- stdout:\n${out}\n--- stderr:\n${err}")
    endif()
endfunction()

# expect_printed(<what> <text>...): fails unless the output of the last run() contains every text.
function(expect_printed what)
    foreach(text IN LISTS ARGN)
        string(FIND "${out}" "${text}" at)
        expect("${what}: no \"${text}\" in the table" NOT at EQUAL -1)
    endforeach()
endfunction()

# expect_malformed(<case>...): runs the program once per case (one argument per case: the
# program's arguments as a ;-list) and fails unless it answers as to a malformed command line or
# file: exit code 2, nothing on stdout, one line on stderr. Leaves code, out and err of the last
# case in the caller, as run() does.
function(expect_malformed)
    math(EXPR last "${ARGC} - 1")
    foreach(index RANGE ${last})
        set(case "${ARGV${index}}")
        run(${case})
        string(LENGTH "${out}" printed)
        string(REGEX MATCHALL "\n" newlines "${err}")
        list(LENGTH newlines lines)
        expect("${case}: exit code ${code}, expected 2" code EQUAL 2)
        expect("${case}: printed on stdout" printed EQUAL 0)
        expect("${case}: ${lines} lines on stderr, expected 1" lines EQUAL 1)
    endforeach()
    set(code "${code}" PARENT_SCOPE)
    set(out "${out}" PARENT_SCOPE)
    set(err "${err}" PARENT_SCOPE)
endfunction()

# json_count(<out_var> <json> <name>): the count of instance type <name> in a plan's
# "counts": [{"name", "count"}] list (0 when absent), from the JSON of the last run().
function(json_count out_var json name)
    set(result 0)
    string(JSON n ERROR_VARIABLE error LENGTH "${json}" plan counts)
    if(NOT error AND n GREATER 0)
        math(EXPR last "${n} - 1")
        foreach(i RANGE ${last})
            string(JSON entry_name GET "${json}" plan counts ${i} name)
            if(entry_name STREQUAL name)
                string(JSON result GET "${json}" plan counts ${i} count)
            endif()
        endforeach()
    endif()
    set(${out_var} "${result}" PARENT_SCOPE)
endfunction()
