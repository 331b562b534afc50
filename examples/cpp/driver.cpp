// A solver's use of singe's H2/O2 kernels from C++: read states, copy them to
// the GPU in the kernels' layout, launch viscosity, diffusion and chemistry,
// copy the results back and compare them with singe's reference files.
//
//   singe h2o2 --write-reference 4096 -o gen    # kernels, gen/h2o2_states.dat, gen/h2o2_<kernel>.ref
//   driver gen                                   # exit status 0 when every kernel matches
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "h2o2_chemistry.h"
#include "h2o2_diffusion.h"
#include "h2o2_viscosity.h"

static const double kTolerance = 1e-9;  // of the largest |value| of the point

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t status_ = (call);                                                                \
    if (status_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(status_)); \
      std::exit(2);                                                                              \
    }                                                                                            \
  } while (0)

// A state or reference file: '#' comments, "rows columns", then one line per point.
struct Table {
  int points = 0, columns = 0;
  std::vector<double> values;  // point-major: values[p * columns + c]
  double at(int p, int c) const { return values[size_t(p) * columns + c]; }
};

static Table read_table(const std::string &path, int extra_columns) {
  std::ifstream in(path);
  std::string line;
  Table table;
  while (std::getline(in, line) && (line.empty() || line[0] == '#')) {
  }
  std::istringstream counts(line);
  if (!(counts >> table.points >> table.columns)) {
    std::fprintf(stderr, "%s: no counts line\n", path.c_str());
    std::exit(2);
  }
  table.columns += extra_columns;
  table.values.resize(size_t(table.points) * table.columns);
  for (double &v : table.values) {
    if (!(in >> v)) {
      std::fprintf(stderr, "%s: fewer numbers than the counts line announces\n", path.c_str());
      std::exit(2);
    }
  }
  return table;
}

static double *to_device(const std::vector<double> &host) {
  double *device = nullptr;
  CHECK(cudaMalloc((void **)&device, host.size() * sizeof(double)));
  CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice));
  return device;
}

// Copies a species-major device array (rows x n) back; the largest error
// against the reference file relative to the point's largest |value|.
static double compare(const double *device, int rows, int n, const std::string &reference_path) {
  std::vector<double> ours(size_t(rows) * n);
  CHECK(cudaMemcpy(ours.data(), device, ours.size() * sizeof(double), cudaMemcpyDeviceToHost));
  const Table reference = read_table(reference_path, 0);
  if (reference.points != n || reference.columns != rows) return INFINITY;
  double worst = 0.0;
  for (int p = 0; p < n; p++) {
    double scale = 0.0, error = 0.0;
    for (int k = 0; k < rows; k++) scale = std::max(scale, std::fabs(reference.at(p, k)));
    for (int k = 0; k < rows; k++) error = std::max(error, std::fabs(ours[size_t(k) * n + p] - reference.at(p, k)));
    worst = std::max(worst, scale > 0.0 ? error / scale : error);
  }
  return worst;
}

int main(int argc, char **argv) {
  const std::string folder = argc > 1 ? argv[1] : ".";
  const Table states = read_table(folder + "/h2o2_states.dat", 2);  // T, P, then the mass fractions
  const int n = states.points, species = states.columns - 2;
  if (species != H2O2_SPECIES_COUNT) {
    std::fprintf(stderr, "%d species per state, the kernels have %d\n", species, H2O2_SPECIES_COUNT);
    return 2;
  }
  // structure of arrays: T[p], P[p], Y[k * n + p] (species_stride = n)
  std::vector<double> T(n), P(n), Y(size_t(species) * n);
  for (int p = 0; p < n; p++) {
    T[p] = states.at(p, 0);
    P[p] = states.at(p, 1);
    for (int k = 0; k < species; k++) Y[size_t(k) * n + p] = states.at(p, 2 + k);
  }
  double *d_T = to_device(T), *d_P = to_device(P), *d_Y = to_device(Y);
  double *d_viscosity, *d_diffusion, *d_rates;
  CHECK(cudaMalloc((void **)&d_viscosity, n * sizeof(double)));
  CHECK(cudaMalloc((void **)&d_diffusion, Y.size() * sizeof(double)));
  CHECK(cudaMalloc((void **)&d_rates, Y.size() * sizeof(double)));

  // [launch] asynchronous on the default stream (NULL); species_stride = n
  CHECK((cudaError_t)h2o2_viscosity(d_T, d_Y, d_viscosity, n, n, NULL));
  CHECK((cudaError_t)h2o2_diffusion(d_T, d_P, d_Y, d_diffusion, n, n, NULL));
  CHECK((cudaError_t)h2o2_chemistry(d_T, d_P, d_Y, d_rates, n, n, NULL));
  CHECK(cudaDeviceSynchronize());
  // [launch end]

  const double errors[] = {compare(d_viscosity, 1, n, folder + "/h2o2_viscosity.ref"),
                           compare(d_diffusion, species, n, folder + "/h2o2_diffusion.ref"),
                           compare(d_rates, species, n, folder + "/h2o2_chemistry.ref")};
  const char *names[] = {"viscosity", "diffusion", "chemistry"};
  int failed = 0;
  for (int i = 0; i < 3; i++) {
    const bool ok = errors[i] <= kTolerance;
    std::printf("h2o2_%s: %d points, largest error %.2e of the point's largest value: %s\n", names[i], n, errors[i],
                ok ? "ok" : "MISMATCH");
    failed += !ok;
  }
  double h2o_rate = 0.0;  // one species of one point: row H2O2_SPECIES_H2O of the species-major array
  CHECK(cudaMemcpy(&h2o_rate, d_rates + size_t(H2O2_SPECIES_H2O) * n, sizeof(double), cudaMemcpyDeviceToHost));
  std::printf("point 0: net production rate of %s %.6e kmol/m^3/s\n", h2o2_species_names[H2O2_SPECIES_H2O], h2o_rate);
  for (double *d : {d_T, d_P, d_Y, d_viscosity, d_diffusion, d_rates}) CHECK(cudaFree(d));
  return failed ? 1 : 0;
}
