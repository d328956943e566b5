// The Catch2 runner of dnnplan_tests. Test cases live in tests/<area>/<component>.cpp.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
