# The floors of core/: each room (a folder of core/) is a library, and a room includes only rooms
# on lower floors (resources/docs/architecture.md, "Rooms and floors"), so that two rooms never
# need each other. Above core/, app/ and views/ reach the engine through the use-case room (jobs/),
# model/ and the named headers of TILESCOPE_FRONT_HEADERS; a room's internal headers
# (TILESCOPE_INTERNAL_HEADERS) are included by its own files only. The tables are here once;
# core/CMakeLists.txt links each room to the rooms below it and checks every include at
# configure time, and the test core_floors runs the same check as a script:
#   cmake -DCORE_DIR=core -P core/floors.cmake
# (app/ and views/ beside CORE_DIR are checked too).

if(CMAKE_SCRIPT_MODE_FILE)
    cmake_minimum_required(VERSION 3.25) # run as a script (the test): the policies of the build
endif()

set(TILESCOPE_FLOORS
    base:0 model:0 expr:0
    spec:1 store:1
    space:2
    compile:3
    analysis:4 search:4
    exchange:5
    measure:6 shapes:6
    tuner:7
    jobs:8)

# The rooms app/ and views/ include whole: the use cases, and the value types every room passes.
set(TILESCOPE_FRONT_ROOMS jobs model)

# The other headers of core/ that app/ and views/ include today, by name. The use cases take them
# over one by one (tune, analyse, export and compare have; check, lab, kt/triton runs to come); a
# header leaves this list when no front end needs it, and a new one comes here only with a reason.
set(TILESCOPE_FRONT_HEADERS
    analysis/clocks.h analysis/confidence.h analysis/launchcheck.h
    analysis/occupancy.h analysis/pareto.h analysis/sourcelines.h analysis/staticanalysis.h
    analysis/verificationsplit.h
    base/error.h base/filewrite.h base/textformat.h
    compile/compilecache.h compile/compiler.h compile/compileservice.h compile/nvrtchelper.h compile/requestbuilder.h
    compile/sass.h
    exchange/bestconfigs.h exchange/cachecheck.h exchange/configcodec.h
    exchange/detection.h exchange/parts.h exchange/recording.h exchange/textfile.h
    expr/expr.h
    measure/cuda/device/workerruntime.h measure/cuda/workerprotocol.h measure/metricnames.h
    search/strategy.h
    shapes/dispatchtable.h
    space/configspace.h
    spec/kernelscan.h spec/launchgeometry.h spec/problemedit.h spec/tuningproblem.h
    store/resultstore.h
    tuner/cacherefresh.h tuner/objective.h tuner/sessionreport.h
    tuner/shapesetrun.h tuner/storedproblem.h tuner/strategylab.h tuner/tuningsession.h)

# Headers internal to their room: shared by its units, included by no other room and no front end.
set(TILESCOPE_INTERNAL_HEADERS
    expr/internal.h
    spec/t1common.h
    exchange/sessionfields.h
    store/schema.h)

# The floor of `room` in `out` ("" for a name that is no room).
function(tilescope_floor_of room out)
    set(floor "")
    foreach(entry IN LISTS TILESCOPE_FLOORS)
        string(REPLACE ":" ";" pair "${entry}")
        list(GET pair 0 name)
        if(name STREQUAL room)
            list(GET pair 1 floor)
        endif()
    endforeach()
    set(${out} "${floor}" PARENT_SCOPE)
endfunction()

# Fails (FATAL_ERROR) when a file of a room includes a room on its own floor or above, or when
# core/ holds a folder the table does not place; the message names every such include.
function(tilescope_check_floors core_dir)
    get_filename_component(core_dir "${core_dir}" ABSOLUTE)
    file(GLOB rooms LIST_DIRECTORIES true RELATIVE "${core_dir}" "${core_dir}/*")
    set(problems "")
    foreach(room IN LISTS rooms)
        if(NOT IS_DIRECTORY "${core_dir}/${room}")
            continue()
        endif()
        tilescope_floor_of("${room}" floor)
        if(floor STREQUAL "")
            string(APPEND problems "\n  core/${room}/ is on no floor: add it to TILESCOPE_FLOORS in core/floors.cmake")
            continue()
        endif()
        file(GLOB_RECURSE files RELATIVE "${core_dir}" "${core_dir}/${room}/*.h" "${core_dir}/${room}/*.cpp")
        foreach(file IN LISTS files)
            file(STRINGS "${core_dir}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
            foreach(line IN LISTS lines)
                string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([a-z_]+)/.*$" "\\1" other "${line}")
                if(other STREQUAL room)
                    continue()
                endif()
                string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
                if(header IN_LIST TILESCOPE_INTERNAL_HEADERS)
                    string(APPEND problems "\n  core/${file} (${room}) includes ${header}, internal to ${other}/")
                    continue()
                endif()
                tilescope_floor_of("${other}" otherFloor)
                if(otherFloor STREQUAL "")
                    continue() # not a room of core/ (a header beside it, such as the worker's)
                endif()
                if(NOT otherFloor LESS floor)
                    string(APPEND problems "\n  core/${file} (${room}, floor ${floor}) includes ${other}/ "
                                           "(floor ${otherFloor}): ${line}")
                endif()
            endforeach()
        endforeach()
    endforeach()
    if(problems)
        message(FATAL_ERROR "An include runs back up a floor of core/ (a room includes only rooms on "
                            "lower floors; move the shared part down):${problems}")
    endif()
endfunction()

# Fails (FATAL_ERROR) when a file of app/ or views/ under `root` includes a header of core/ that
# is neither in TILESCOPE_FRONT_ROOMS nor in TILESCOPE_FRONT_HEADERS, or a header internal to a
# room; the message names every such include. An include that names a file of the front end's own
# folders (views/shapes/ beside core/shapes/) is its own.
function(tilescope_check_front_ends root)
    get_filename_component(root "${root}" ABSOLUTE)
    set(problems "")
    foreach(front app views)
        if(NOT IS_DIRECTORY "${root}/${front}")
            continue()
        endif()
        file(GLOB_RECURSE files RELATIVE "${root}" "${root}/${front}/*.h" "${root}/${front}/*.cpp")
        foreach(file IN LISTS files)
            get_filename_component(dir "${root}/${file}" DIRECTORY)
            file(STRINGS "${root}/${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[a-z_]+/")
            foreach(line IN LISTS lines)
                string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${line}")
                string(REGEX REPLACE "/.*$" "" room "${header}")
                tilescope_floor_of("${room}" floor)
                if(floor STREQUAL "" OR EXISTS "${root}/${front}/${header}" OR EXISTS "${dir}/${header}")
                    continue() # not core/'s, or the front end's own
                endif()
                if(header IN_LIST TILESCOPE_INTERNAL_HEADERS)
                    string(APPEND problems "\n  ${file} includes ${header}, internal to ${room}/")
                elseif(NOT room IN_LIST TILESCOPE_FRONT_ROOMS AND NOT header IN_LIST TILESCOPE_FRONT_HEADERS)
                    string(APPEND problems "\n  ${file} includes ${header}: not a use case (jobs/), not model/, "
                                           "not in TILESCOPE_FRONT_HEADERS")
                endif()
            endforeach()
        endforeach()
    endforeach()
    if(problems)
        message(FATAL_ERROR "app/ and views/ reach core/ through the use cases (a front end includes jobs/, "
                            "model/ and the headers named in core/floors.cmake, never a room's internals):${problems}")
    endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND CORE_DIR)
    get_filename_component(TILESCOPE_ROOT "${CORE_DIR}/.." ABSOLUTE)
    tilescope_check_floors("${CORE_DIR}")
    tilescope_check_front_ends("${TILESCOPE_ROOT}")
    message(STATUS "core/: every include goes down a floor; app/ and views/ include what core/floors.cmake names")
endif()
