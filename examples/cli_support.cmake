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
