"""Aten rows with no attributable graph: kept outside both denominators of
the support page and listed in its appendix, each with the reason it cannot
be measured by a spec. A row belongs here only when no small CPU module can
put it in a graph the ONNX exporter would see; anything targetable gets a spec
(with a known-gap note if the exporter lacks it), not an exclusion."""

from opsweep.catalog.load import Exclusion

METADATA = "tensor metadata query: returns a Python value, not a tensor, so there is no graph"
AUTOGRAD = "autograd or storage state, not a computation: nothing for an exported graph to hold"
BACKEND = ("backend-specific kernel (CUDA, cuDNN, MIOpen, oneDNN, FBGEMM or Vulkan): a CPU model "
           "never reaches it; the exporter sees the portable operator instead")
SPARSE = "sparse or nested tensor layout: the exporter takes dense strided tensors only"
QUANTIZED = ("quantized-tensor operator: needs a QTensor input, which torch.export cannot pass "
             "to the ONNX exporter")


def _rows(reason, names):
    return [Exclusion(name, reason) for name in names.split()]


EXCLUDED = [
    *_rows(METADATA, """can_cast promote_types result_type dim size stride numel storage_offset
        get_device output_nr is_complex is_conj is_contiguous is_distributed is_floating_point
        is_inference is_leaf is_neg is_nonzero is_pinned is_same_size is_set_to is_signed
        requires_grad retains_grad dense_dim sparse_dim is_coalesced q_per_channel_axis q_scale
        q_zero_point qscheme"""),
    *_rows(AUTOGRAD, "data retain_grad record_stream pin_memory set set_data get_gradients"),
    *_rows(BACKEND, """batch_norm_elemt batch_norm_gather_stats batch_norm_gather_stats_with_counts
        batch_norm_stats conv_depthwise3d convolution_overrideable cudnn_affine_grid_generator
        cudnn_batch_norm cudnn_convolution cudnn_convolution_add_relu cudnn_convolution_relu
        cudnn_convolution_transpose cudnn_grid_sampler cudnn_is_acceptable is_vulkan_available
        miopen_batch_norm miopen_convolution miopen_convolution_add_relu miopen_convolution_relu
        miopen_convolution_transpose miopen_ctc_loss miopen_depthwise_convolution miopen_rnn
        mkldnn_adaptive_avg_pool2d mkldnn_convolution mkldnn_linear mkldnn_max_pool2d
        mkldnn_max_pool3d mkldnn_reorder_conv2d_weight mkldnn_reorder_conv3d_weight
        mkldnn_rnn_layer to_mkldnn fbgemm_linear_fp16_weight
        fbgemm_linear_fp16_weight_fp32_activation fbgemm_linear_int8_weight
        fbgemm_linear_int8_weight_fp32_activation fbgemm_linear_quantize_weight
        fbgemm_pack_gemm_matrix_fp16 fbgemm_pack_quantized_matrix"""),
    *_rows(SPARSE, """ccol_indices ccol_indices_copy col_indices col_indices_copy crow_indices
        crow_indices_copy row_indices row_indices_copy indices indices_copy values values_copy
        coalesce copy_sparse_to_sparse hspmm smm sspaddmm sparse_mask sparse_resize
        sparse_resize_and_clear resize_as_sparse sparse_sampled_addmm sparse_bsc_tensor
        sparse_bsr_tensor sparse_compressed_tensor sparse_coo_tensor sparse_csc_tensor
        sparse_csr_tensor to_dense to_sparse to_sparse_bsc to_sparse_bsr to_sparse_csc
        to_sparse_csr nested_to_padded_tensor to_padded_tensor"""),
    *_rows(QUANTIZED, """empty_quantized quantized_batch_norm quantized_gru quantized_gru_cell
        quantized_lstm quantized_lstm_cell quantized_max_pool1d quantized_max_pool2d
        quantized_max_pool3d quantized_rnn_relu_cell quantized_rnn_tanh_cell"""),
    Exclusion("native_norm", "has a sparse kernel only: no CPU implementation for strided tensors"),
    Exclusion("glu_jvp", "forward-mode autodiff helper: never part of an inference graph"),
    Exclusion("from_file", "reads a file into storage at call time: I/O, not a graph"),
    Exclusion("slice_inverse", "functionalization internal: needs a base tensor sharing the "
              "input's storage, which no module input can provide"),
    Exclusion("choose_qparams_optimized", "computes quantization parameters eagerly; it never "
              "appears under its own name in a trace, and torch.export cannot capture it"),
    Exclusion("chalf", "complex32 output: no ONNX or onnxruntime type holds complex32"),
]
