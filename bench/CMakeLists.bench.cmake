# Benchmarks (Google Benchmark): every bench/<name>_bench.cc becomes crmd_bench_<name>,
# linked against crmd_app, so adding a benchmark needs no edit here.
find_package(benchmark REQUIRED)
file(GLOB crmd_bench_srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_bench.cc)
foreach(src ${crmd_bench_srcs})
  get_filename_component(name ${src} NAME_WE)
  string(REGEX REPLACE "_bench$" "" name ${name})
  add_executable(crmd_bench_${name} ${src})
  target_link_libraries(crmd_bench_${name} PRIVATE crmd_app benchmark::benchmark_main)
  # Designated initialisers leave optional members defaulted on purpose (STYLE.md), as in
  # the tests.
  target_compile_options(crmd_bench_${name} PRIVATE -Wno-missing-field-initializers)
endforeach()
