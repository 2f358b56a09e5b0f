// Graph partitioning for distributed training: a k-way METIS partition of the
// nodes (edge-cut objective) and, per part, what one rank holds — its owned
// nodes, its halo (ghost) nodes with their owners, the edges into its owned
// nodes, and the send / receive maps of the halo exchange.
//
// Sizes: N global nodes, k parts; a part has n_own owned and n_halo halo nodes,
// n_local = n_own + n_halo local ids: owned first (ascending global id), then the
// halo grouped by owner rank (ascending rank, then ascending global id), so the
// halo rows received from rank r are one contiguous block.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "edgewise/gnn/data/dataset.hpp"

namespace edgewise::gnn::dist {

struct PartitionOptions {
  uint64_t seed = 0;               // METIS's random seed: the same seed and graph give the same parts
  double imbalance = 1.03;         // allowed max part weight / mean part weight, per constraint (> 1)
  bool balance_edges = false;      // also balance the in-edges per part (a second vertex weight)
  std::vector<int64_t> balance_nodes;  // also balance these nodes (e.g. train_idx) per part
};

// The assignment of every node to a part, and how good it is.
struct Partition {
  int64_t num_parts = 0;
  std::vector<int32_t> part;        // [N] part of each node, in [0, k)
  int64_t edge_cut = 0;             // directed input edges whose endpoints lie in different parts
  std::vector<int64_t> part_nodes;  // [k] owned nodes per part
  std::vector<int64_t> part_edges;  // [k] input edges into each part's nodes
  // max part size / mean part size (nodes, edges).
  double node_balance() const;
  double edge_balance() const;
};

// k-way METIS partition (METIS_PartGraphKway, edge-cut objective) of the graph
// given by COO edges src[e] -> dst[e] over N nodes, treated as undirected (self loops
// and duplicates ignored). k == 1 puts everything in part 0 without calling METIS;
// a graph without edges is split into k contiguous blocks. Throws
// std::invalid_argument when k < 1, k > N, or the ids are outside [0, N).
Partition partition(std::span<const int64_t> src, std::span<const int64_t> dst, int64_t num_nodes, int64_t k,
                    const PartitionOptions& options = {});
Partition partition(const Dataset& dataset, int64_t k, const PartitionOptions& options = {});

// What one rank holds (see the size names above).
struct Part {
  int64_t rank = 0, num_parts = 1, num_global_nodes = 0;
  int64_t num_owned = 0;
  std::vector<int64_t> global_ids;    // [n_local] global id of each local node
  std::vector<int32_t> halo_owner;    // [n_halo] owner rank of halo node num_owned + i
  // Halo exchange, forward: rank r sends to rank s the owned rows
  // send_index[send_offsets[s] .. send_offsets[s+1]) (local ids, in the order s expects
  // them) and receives from s the halo rows [num_owned + recv_offsets[s], num_owned + recv_offsets[s+1]).
  // Backward runs the same maps the other way (halo gradients summed into owned rows).
  std::vector<int64_t> send_offsets;  // [k + 1]
  std::vector<int64_t> send_index;    // [send_offsets[k]]
  std::vector<int64_t> recv_offsets;  // [k + 1], recv_offsets[k] == n_halo
  // The local graph: n_local nodes, the input edges into owned nodes in their input
  // order (local ids), the features and labels of every local row, the splits
  // restricted to owned nodes (local ids). Name "<dataset>.part<r>of<k>".
  Dataset local;
  // Global position of each local row's first stored feature value when the global
  // features are held as CSR (the key of sparse dropout masks): [n_local].
  std::vector<int64_t> feature_value_base;

  int64_t num_local() const { return static_cast<int64_t>(global_ids.size()); }
  int64_t num_halo() const { return num_local() - num_owned; }
};

// The part of rank `rank` of `partition` over `dataset` (features copied in the
// dataset's format). Throws std::invalid_argument when the partition does not fit
// the dataset or rank is outside [0, k).
Part build_part(const Dataset& dataset, const Partition& partition, int64_t rank);

// A part as an .npz in the dataset layout load_dataset() reads (num_nodes, edge_index,
// node_feat dense, node_label, train_idx / valid_idx / test_idx, all local) plus the
// keys part_rank, part_num_parts, part_num_global_nodes, part_num_owned,
// part_global_ids, part_halo_owner, part_send_offsets, part_send_index,
// part_recv_offsets, part_feature_value_base. read_part() checks every map against
// the others and throws DataFileError naming the file and key.
void write_part(const std::string& path, const Part& part);
Part read_part(const std::string& path);

}  // namespace edgewise::gnn::dist
