// edgewise-bench: runs the registered cases and prints a table (and JSON records).
//   edgewise-bench [--filter REGEX] [--json FILE] [--quick] [--device cpu|cuda|all] [--list]
// Exit status: 0 done, 2 bad flags (before any case runs), 1 any other failure.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "bench.hpp"
#include "edgewise/cli/flags.hpp"
#include "edgewise/cli/json_file.hpp"
#include "edgewise/kernels/common/buffer.hpp"

namespace edgewise::bench {
namespace {

struct Row {
  std::string name;
  Device device;
  double median_ms = 0, min_ms = 0, gbps = 0, floor_gbps = 0, bytes = 0;
  int repeats = 0;
  std::string baseline, detail;
  double speedup = 0;  // baseline median / this median, when a baseline ran
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Times `run` until both `min_repeats` calls and `min_ms` have passed (after one
// warm-up); returns the per-call times in ms.
std::vector<double> time_calls(const std::function<void()>& run, int min_repeats, double min_ms, int max_repeats) {
  run();
  std::vector<double> times;
  auto begin = Clock::now();
  while ((static_cast<int>(times.size()) < min_repeats || ms_since(begin) < min_ms) &&
         static_cast<int>(times.size()) < max_repeats) {
    auto start = Clock::now();
    run();
    times.push_back(ms_since(start));
  }
  return times;
}

double median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// STREAM-style copy (a[i] = b[i]) over arrays far larger than the caches, counting
// bytes read + written: the rate any streaming op on this device can hope for.
// The arrays are kept, so the floor can be measured again next to every case: a
// shared machine's bandwidth drifts by tens of percent within a minute, and a
// ratio against a floor measured a minute earlier would carry that drift.
class CopyFloor {
 public:
  CopyFloor(Device device, bool quick)
      : n_(int64_t{1} << (quick ? 25 : 26)), src_(n_, device), dst_(n_, device) {  // 128 / 256 MB per array
    if (device.is_cpu()) {
      float* s = src_.data();
      float* d = dst_.data();
      const int64_t n = n_;
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < n; ++i) s[i] = static_cast<float>(i & 1023);
      copy_ = [s, d, n] {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) d[i] = s[i];
      };
    } else {
      src_.fill_bytes(1);
      copy_ = [this, device] {
        copy_bytes(dst_.data(), device, src_.data(), device, dst_.bytes());
        synchronize(device);
      };
    }
  }
  // Copy times (ms) of about `ms` milliseconds of copying, after one warm-up.
  std::vector<double> times(int min_repeats, double ms) { return time_calls(copy_, min_repeats, ms, 200); }
  double gbps(double median_ms) const { return 2.0 * static_cast<double>(n_) * sizeof(float) / (median_ms * 1e-3) / 1e9; }

 private:
  int64_t n_;
  Buffer<float> src_, dst_;
  std::function<void()> copy_;
};

void write_json(const std::string& path, const std::vector<Row>& rows) {
  nlohmann::ordered_json records = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json record = {{"name", r.name},
                                     {"device", r.device.str()},
                                     {"median_ms", r.median_ms},
                                     {"min_ms", r.min_ms},
                                     {"gbps", r.gbps},
                                     {"floor_gbps", r.floor_gbps},
                                     {"floor_ratio", r.floor_gbps > 0 ? r.gbps / r.floor_gbps : 0.0},
                                     {"bytes", r.bytes},
                                     {"repeats", r.repeats}};
    if (!r.baseline.empty()) {
      record["baseline"] = r.baseline;
      record["speedup_vs_baseline"] = r.speedup;
    }
    if (!r.detail.empty()) record["detail"] = r.detail;
    records.push_back(std::move(record));
  }
  cli::write_json_file(path, records);
}

struct Flags {
  std::string filter = ".*", json, device = "all";
  bool quick = false, list = false;
};

void add_flags(CLI::App& app, Flags& f) {
  cli::add_text(app, "--filter", f.filter, "run the cases whose name <op>/<variant>/<shape>/<device> matches REGEX")
      ->type_name("REGEX")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            try {
              std::regex check(text);
            } catch (const std::regex_error& e) {
              return "'" + text + "' is not a regular expression (" + e.what() + ")";
            }
            return "";
          },
          ""));
  cli::add_output_path(app, "--json", f.json, "also write the records as JSON");
  app.add_flag("--quick", f.quick, "fewer repeats and smaller inputs");
  cli::add_choice(app, "--device", f.device, "devices to run on", {"cpu", "cuda", "all"});
  app.add_flag("--list", f.list, "list the selected cases and exit");
}

int main_impl(const Flags& flags) {
  const std::string& filter = flags.filter;
  const std::string& json = flags.json;
  const std::string& device_choice = flags.device;
  const bool list = flags.list;
  Options options;
  options.quick = flags.quick;
  const std::regex pattern(filter);
  std::vector<Device> devices;
  for (Device d : bench_devices()) {
    if (device_choice == "all" || (device_choice == "cpu" && d.is_cpu()) || (device_choice == "cuda" && d.is_cuda()))
      devices.push_back(d);
  }
  if (device_choice == "cuda" && devices.empty()) {
    std::printf("no CUDA device here (%s): no GPU cases run\n", cuda_unavailable_reason().c_str());
    return 0;
  }
  std::vector<std::pair<Case*, std::string>> selected;
  for (Case& c : registry()) {
    if (std::find(devices.begin(), devices.end(), c.device) == devices.end()) continue;
    std::string full = c.name + "/" + (c.device.is_cpu() ? "cpu" : "cuda");
    if (std::regex_search(full, pattern)) selected.emplace_back(&c, full);
  }
  if (list) {
    for (auto& [c, full] : selected) std::printf("%s\n", full.c_str());
    return 0;
  }
  std::printf("edgewise-bench: %zu cases, %d OpenMP threads%s\n", selected.size(), omp_get_max_threads(),
              options.quick ? ", quick" : "");
  if (cuda_device_count() == 0) std::printf("(no GPU here: %s; CPU cases only)\n", cuda_unavailable_reason().c_str());

  std::map<int, std::unique_ptr<CopyFloor>> floors;  // per device type
  std::vector<Row> rows;
  std::map<std::string, double> median_by_name;
  std::printf("%-58s %10s %10s %8s %7s %7s %9s\n", "case", "median ms", "min ms", "GB/s", "copy", "floor", "vs base");
  std::printf("(copy: GB/s of the copy timed just before and after that case; floor: GB/s / copy)\n");
  for (auto& [c, full] : selected) {
    const int key = static_cast<int>(c->device.type);
    if (!floors.count(key)) {
      floors[key] = std::make_unique<CopyFloor>(c->device, options.quick);
      const double first = floors[key]->gbps(median(floors[key]->times(options.quick ? 5 : 15, options.quick ? 100 : 400)));
      std::printf("%-58s %10s %10s %8.1f %7s %7s %9s\n", (std::string("memory floor: copy/") + (key ? "cuda" : "cpu")).c_str(),
                  "", "", first, "", "1.00", "");
    }
    Prepared p = c->prepare(options);
    const bool gpu = c->device.is_cuda();
    // The floor of this row: copies timed just before and just after the case, pooled.
    CopyFloor& floor = *floors[key];
    const double floor_ms = options.quick ? 50 : 150;
    std::vector<double> floor_times = floor.times(3, floor_ms);
    auto times = time_calls(p.run, options.quick ? 5 : (gpu ? 50 : 20), options.quick ? 50 : 300,
                            p.max_repeats > 0 ? p.max_repeats : 2000);
    const std::vector<double> after = floor.times(3, floor_ms);
    floor_times.insert(floor_times.end(), after.begin(), after.end());
    Row r;
    r.name = full;
    r.device = c->device;
    r.median_ms = median(times);
    r.min_ms = *std::min_element(times.begin(), times.end());
    r.bytes = p.bytes;
    r.gbps = p.bytes > 0 ? p.bytes / (r.median_ms * 1e-3) / 1e9 : 0;
    r.floor_gbps = floor.gbps(median(floor_times));
    r.repeats = static_cast<int>(times.size());
    r.detail = p.detail;
    if (!p.baseline.empty()) {
      r.baseline = p.baseline + "/" + (gpu ? "cuda" : "cpu");
      if (median_by_name.count(r.baseline)) r.speedup = median_by_name[r.baseline] / r.median_ms;
    }
    median_by_name[full] = r.median_ms;
    char ratio[16] = "", speed[32] = "";
    if (r.gbps > 0) std::snprintf(ratio, sizeof ratio, "%.2f", r.gbps / r.floor_gbps);
    if (r.speedup > 0) std::snprintf(speed, sizeof speed, "%.2fx", r.speedup);
    std::printf("%-58s %10.3f %10.3f %8.1f %7.1f %7s %9s %s\n", full.c_str(), r.median_ms, r.min_ms, r.gbps, r.floor_gbps,
                ratio, speed,
                r.detail.c_str());
    std::fflush(stdout);
    rows.push_back(r);
  }
  if (!json.empty()) {
    write_json(json, rows);
    std::printf("wrote %zu records to %s\n", rows.size(), json.c_str());
  }
  return 0;
}

}  // namespace
}  // namespace edgewise::bench

int main(int argc, char** argv) {
  CLI::App app("Times the registered cases and reports GB/s against this machine's memory-bandwidth floor.",
               "edgewise-bench");
  edgewise::bench::Flags flags;
  edgewise::bench::add_flags(app, flags);
  app.footer("Cases are named <op>/<variant>/<shape>/<device>; --filter matches that name.");
  if (const std::optional<int> exit_code = edgewise::cli::parse(app, argc, argv)) return *exit_code;
  try {
    return edgewise::bench::main_impl(flags);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "edgewise-bench: %s\n", e.what());
    return 1;
  }
}
