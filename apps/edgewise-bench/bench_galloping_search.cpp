// galloping_search cases: dense and sparse sorted queries over 10M sorted float32
// values (direct, through a value_order, and in 10K segments), each timed next to
// one independent binary search per query on the same data in the same run, for
// several queries_per_tile. The gallop/binary speedup across Q locates the crossover.
#include <algorithm>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "bench.hpp"
#include "edgewise/kernels/common/buffer.hpp"
#include "edgewise/kernels/common/check.hpp"
#include "edgewise/kernels/galloping_search.hpp"

namespace edgewise::bench {
namespace {

constexpr int64_t kValues = 10'000'000;

enum class Layout { Direct, Ordered, Segmented };
enum class Method { Binary, Gallop };

struct Spec {
  Layout layout;
  int64_t N, Q, S;  // S: segments (1 unless Segmented)
  Method method;
  int64_t tile;  // queries_per_tile (Gallop)
};

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Direct: return "direct";
    case Layout::Ordered: return "order";
    case Layout::Segmented: return "segmented";
  }
  return "?";
}

std::string short_count(int64_t n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return std::to_string(n / 1'000'000) + "M";
  if (n >= 1'000 && n % 1'000 == 0) return std::to_string(n / 1'000) + "K";
  return std::to_string(n);
}

std::string shape_name(const Spec& s) {
  std::string name = std::string(layout_name(s.layout)) + "/N=" + short_count(s.N) + ",Q=" + short_count(s.Q);
  if (s.layout == Layout::Segmented) name += ",S=" + short_count(s.S);
  return name;
}

std::string case_name(const Spec& s) {
  if (s.method == Method::Binary) return "galloping_search/binary/" + shape_name(s);
  return "galloping_search/gallop/" + shape_name(s) + ",T=" + std::to_string(s.tile);
}

// Sorted values in view order: view[i] = i + jitter (no sort needed at 10M). The
// queries are stratified over [0, N) inside each segment, so sorted per segment.
struct Data {
  std::vector<float> values;        // storage (shuffled rows when Ordered)
  std::vector<int64_t> order;       // Ordered: view position -> row
  std::vector<float> queries;
  std::vector<int64_t> segments;    // S x 4
};

Data make_data(const Spec& s, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> jitter(0.0f, 0.9f);
  Data d;
  std::vector<float> view(static_cast<size_t>(s.N));
  for (int64_t i = 0; i < s.N; ++i) view[i] = static_cast<float>(i) + jitter(rng);
  const int64_t values_per_segment = s.N / s.S, queries_per_segment = s.Q / s.S;
  d.queries.resize(static_cast<size_t>(s.Q));
  for (int64_t seg = 0; seg < s.S; ++seg) {
    const int64_t vo = seg * values_per_segment, qo = seg * queries_per_segment;
    const int64_t vc = seg + 1 == s.S ? s.N - vo : values_per_segment;
    const int64_t qc = seg + 1 == s.S ? s.Q - qo : queries_per_segment;
    d.segments.insert(d.segments.end(), {vo, vc, qo, qc});
    const double step = static_cast<double>(vc) / static_cast<double>(std::max<int64_t>(qc, 1));
    std::uniform_real_distribution<double> u(0.0, 1.0);
    for (int64_t j = 0; j < qc; ++j) {
      d.queries[qo + j] = static_cast<float>(static_cast<double>(vo) + (static_cast<double>(j) + u(rng)) * step);
    }
  }
  if (s.layout == Layout::Ordered) {
    d.order.resize(static_cast<size_t>(s.N));
    std::iota(d.order.begin(), d.order.end(), int64_t{0});
    std::shuffle(d.order.begin(), d.order.end(), rng);
    d.values.resize(static_cast<size_t>(s.N));
    for (int64_t i = 0; i < s.N; ++i) d.values[d.order[i]] = view[i];
  } else {
    d.values = std::move(view);
  }
  return d;
}

// Lower bound of q in view positions [vo, vo + vc) (through `order` when not null).
int64_t std_lower_bound(const float* values, const int64_t* order, int64_t vo, int64_t vc, float q) {
  if (order == nullptr) return std::lower_bound(values + vo, values + vo + vc, q) - values;
  return std::lower_bound(order + vo, order + vo + vc, q, [values](int64_t row, float x) { return values[row] < x; }) -
         order;
}

// The baseline: one independent binary search (std::lower_bound) per query.
void binary_search_cpu(const float* values, const int64_t* order, const float* queries, const int64_t* segments,
                       int64_t S, int64_t* positions) {
  if (S == 1) {  // one segment: split its queries over the threads
    const int64_t vc = segments[1], qc = segments[3];
#pragma omp parallel for schedule(static)
    for (int64_t j = 0; j < qc; ++j) positions[j] = std_lower_bound(values, order, 0, vc, queries[j]);
    return;
  }
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t seg = 0; seg < S; ++seg) {
    const int64_t vo = segments[4 * seg], vc = segments[4 * seg + 1];
    const int64_t qo = segments[4 * seg + 2], qc = segments[4 * seg + 3];
    for (int64_t j = qo; j < qo + qc; ++j) positions[j] = std_lower_bound(values, order, vo, vc, queries[j]);
  }
}

Prepared prepare(Device device, Spec spec, const Options& options) {
  const Spec named = spec;
  if (options.quick) {
    spec.N /= 10;
    spec.Q = std::max<int64_t>(spec.Q / 10, 1);
    spec.S = std::max<int64_t>(spec.S / 10, 1);
  }
  Data d = make_data(spec, options.seed);
  struct Copy {
    Buffer<float> values, queries;
  };
  struct State {
    std::vector<Copy> copies;  // rotated: the working set exceeds the LLC
    Buffer<int64_t> order, segments, positions;
    Buffer<uint32_t> word;
    std::unique_ptr<Context> ctx;
    size_t next = 0;
  };
  auto st = std::make_shared<State>();
  const double input_bytes = static_cast<double>(spec.N) * (4 + (d.order.empty() ? 0 : 8)) + spec.Q * 4.0;
  const int copies = device.is_cpu() ? rotation_copies(input_bytes) : 1;
  for (int i = 0; i < copies; ++i) {
    st->copies.push_back({Buffer<float>::from_host(d.values, device), Buffer<float>::from_host(d.queries, device)});
  }
  if (!d.order.empty()) st->order = Buffer<int64_t>::from_host(d.order, device);
  st->segments = Buffer<int64_t>::from_host(d.segments, device);
  st->positions = Buffer<int64_t>(spec.Q, device);
  st->word = Buffer<uint32_t>(1, device);
  st->ctx = std::make_unique<Context>(device);

  const int64_t S = spec.S;
  auto call = [st, spec, S, device](Context& ctx) {
    const Copy& c = st->copies[st->next++ % st->copies.size()];
    if (spec.method == Method::Binary && device.is_cpu()) {
      binary_search_cpu(c.values.data(), st->order.empty() ? nullptr : st->order.data(), c.queries.data(),
                        st->segments.data(), S, st->positions.data());
      return;
    }
    GallopingSearchOptions opt;
    // On CUDA the per-query binary search is the same kernel with one query per tile.
    opt.queries_per_tile = spec.method == Method::Binary ? 1 : spec.tile;
    VectorView<const int64_t> order;
    if (!st->order.empty()) order = st->order.view();
    galloping_search<float>(c.values.view(), order, c.queries.view(), st->segments.matrix(S, 4),
                            st->positions.view(), st->word.view(), opt, ctx);
    ctx.synchronize();
  };

  // Validate once (checked call), compare with std::lower_bound, then time trusted calls.
  Context check(device);
  call(check);
  const auto got = st->positions.to_host_vector();
  const auto word = st->word.to_host_vector();
  if (spec.method == Method::Gallop && word[0] != 0) throw std::runtime_error(case_name(spec) + ": validation word set");
  const int64_t stride = std::max<int64_t>(1, spec.Q / 1000);
  const int64_t* order = d.order.empty() ? nullptr : d.order.data();
  for (int64_t seg = 0; seg < S; seg += std::max<int64_t>(1, S / 50)) {
    const int64_t vo = d.segments[4 * seg], vc = d.segments[4 * seg + 1];
    const int64_t qo = d.segments[4 * seg + 2], qc = d.segments[4 * seg + 3];
    for (int64_t j = qo; j < qo + qc; j += stride) {
      const int64_t want = std_lower_bound(d.values.data(), order, vo, vc, d.queries[j]);
      if (got[j] != want) {
        throw std::runtime_error(detail::concat(case_name(spec), ": positions[", j, "] = ", got[j], ", expected ",
                                                want));
      }
    }
  }
  st->ctx->validate = false;

  Prepared p;
  p.run = [st, call] { call(*st->ctx); };
  // Queries read + positions written + the values the search must touch: all of them
  // when queries are dense, about one cache line per query when sparse.
  const double touched = std::min(static_cast<double>(spec.N) * 4 * (d.order.empty() ? 1 : 3), spec.Q * 64.0);
  p.bytes = spec.Q * 12.0 + touched;
  if (spec.method == Method::Gallop) {
    Spec base = named;  // names keep the full-size shape under --quick
    base.method = Method::Binary;
    p.baseline = case_name(base);
  } else {
    p.detail = device.is_cpu() ? "std::lower_bound per query" : "galloping_search with T=1";
  }
  return p;
}

EW_BENCH_CASES {
  struct Shape {
    Layout layout;
    int64_t Q, S;
    std::vector<int64_t> tiles;
  };
  const std::vector<Shape> shapes = {
      {Layout::Direct, 10'000'000, 1, {8, 32, 128, 1024}},  // dense: a query per value
      {Layout::Direct, 1'000'000, 1, {8, 32, 128}},
      {Layout::Direct, 100'000, 1, {32}},
      {Layout::Direct, 10'000, 1, {32}},
      {Layout::Direct, 1'000, 1, {32}},
      {Layout::Ordered, 10'000'000, 1, {32}},
      {Layout::Ordered, 100'000, 1, {32}},
      {Layout::Segmented, 10'000'000, 10'000, {32}},
      {Layout::Segmented, 100'000, 10'000, {8}},
  };
  for (Device device : bench_devices()) {
    for (const Shape& sh : shapes) {
      std::vector<Spec> specs = {{sh.layout, kValues, sh.Q, sh.S, Method::Binary, 1}};
      for (int64_t tile : sh.tiles) specs.push_back({sh.layout, kValues, sh.Q, sh.S, Method::Gallop, tile});
      for (const Spec& spec : specs) {
        register_case({case_name(spec), device, [=](const Options& o) { return prepare(device, spec, o); }});
      }
    }
  }
}

}  // namespace
}  // namespace edgewise::bench
