# CMAKE_PROJECT_INCLUDE for scripts/build_llama_server.sh: llama.cpp's C++ outside the CPU kernels is
# compiled at -O0 (CMAKE_CXX_FLAGS_RELEASE) to shorten the build (478 s of CPU; at -O3 throughout it
# took 523 s of wall on 2 cores); the kernels that do the model's arithmetic (the ggml-cpu target) keep -O3, added last so it
# wins. Deferred to the end of the top directory, when the target exists (a renamed target fails the
# configure step, naming it).
# Without AMX: -march=native turns on llama.cpp's AMX kernels wherever the CPU lists AMX, and on a
# virtual machine that lists it (this one: Xeon, Firecracker guest, the kernel granting the tile
# permission) their first tile instruction died of SIGILL when the server loaded its model. The
# AVX-512 kernels run everywhere -march=native does.
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL target_compile_options ggml-cpu PRIVATE
               -O3 -mno-amx-tile -mno-amx-int8 -mno-amx-bf16)
