# The floors of core/: each room (a folder of core/) is a library, and a room includes only rooms
# on lower floors (DESIGN.md), so that two rooms never need each other. The table is here once;
# core/CMakeLists.txt links each room to the rooms below it and checks every include at
# configure time, and the test core_floors runs the same check as a script:
#   cmake -DCORE_DIR=core -P core/floors.cmake

set(TILESCOPE_FLOORS
    base:0 model:0 expr:0
    spec:1 store:1
    space:2
    compile:3
    analysis:4 search:4
    exchange:5
    measure:6 shapes:6
    tuner:7)

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

if(CMAKE_SCRIPT_MODE_FILE AND CORE_DIR)
    tilescope_check_floors("${CORE_DIR}")
    message(STATUS "core/: every include goes down a floor")
endif()
