// Exposition texts in the shapes SGLang servers emit (written for these tests, not captured verbatim): the
// Python client's float formatting, labels in sorted order, multi-process series with `pid`, a PD prefill
// server with `engine_type`/`tp_rank`, histograms with `le` first, and a few awkward corners.

/** A prefill server of a PD deployment, tp 2: one series per tp rank, `pid` on the scheduler gauges. */
export const PREFILL_TP2 = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} 0.0
sglang:num_running_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41823",pp_rank="0",tp_rank="1"} 0.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} 3.0
sglang:num_queue_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41823",pp_rank="0",tp_rank="1"} 3.0
# HELP sglang:num_prefill_inflight_queue_reqs The number of requests in the prefill inflight queue.
# TYPE sglang:num_prefill_inflight_queue_reqs gauge
sglang:num_prefill_inflight_queue_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} 1.0
sglang:num_prefill_inflight_queue_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41823",pp_rank="0",tp_rank="1"} 1.0
# HELP sglang:num_prefill_bootstrap_queue_reqs The number of requests in the prefill bootstrap queue.
# TYPE sglang:num_prefill_bootstrap_queue_reqs gauge
sglang:num_prefill_bootstrap_queue_reqs{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} 0.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} 0.0123046875
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="prefill",model_name="deepseek-ai/DeepSeek-V3",pid="41822",pp_rank="0",tp_rank="0"} NaN
# HELP sglang:prompt_tokens_total Number of prefill tokens processed.
# TYPE sglang:prompt_tokens_total counter
sglang:prompt_tokens_total{model_name="deepseek-ai/DeepSeek-V3"} 8.128902e+06
sglang:prompt_tokens_created{model_name="deepseek-ai/DeepSeek-V3"} 1.7339471238741329e+09
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="deepseek-ai/DeepSeek-V3"} 40211.0
# HELP sglang:num_requests_total Number of requests processed.
# TYPE sglang:num_requests_total counter
sglang:num_requests_total{model_name="deepseek-ai/DeepSeek-V3"} 40211.0
# HELP sglang:num_bootstrap_failed_reqs_total Number of bootstrap failed requests.
# TYPE sglang:num_bootstrap_failed_reqs_total counter
sglang:num_bootstrap_failed_reqs_total{model_name="deepseek-ai/DeepSeek-V3"} 2.0
# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_sum{model_name="deepseek-ai/DeepSeek-V3"} 2.3518979474117756e+06
sglang:time_to_first_token_seconds_bucket{le="0.001",model_name="deepseek-ai/DeepSeek-V3"} 0.0
sglang:time_to_first_token_seconds_bucket{le="0.5",model_name="deepseek-ai/DeepSeek-V3"} 12.0
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="deepseek-ai/DeepSeek-V3"} 40211.0
sglang:time_to_first_token_seconds_count{model_name="deepseek-ai/DeepSeek-V3"} 40211.0
`;

/** Awkward but valid corners: escapes, blanks and tabs, timestamps, ±Inf, a quoted UTF-8 name, CRLF, comments. */
export const CORNERS =
  '# a free comment line\n' +
  '\n' +
  '   \t\n' +
  '# HELP odd_gauge A help text with a \\\\ backslash and a\\nsecond line\n' +
  '# TYPE odd_gauge gauge\n' +
  'odd_gauge{path="C:\\\\tmp",quote="say \\"hi\\"",nl="a\\nb",utf="é→✓"} -Inf 1712345678901\n' +
  'odd_gauge { a = "1" , b="2", } +Inf\n' +
  'odd_gauge\t42 -5\n' +
  '{"my.dotted.metric", le="0.5"} 7.5e-3\r\n' +
  'bare_total 3\n' +
  'openmetrics_sample 1.5 1712345678.250 # {trace_id="abc"} 1.0\n' +
  '# EOF';

/** Lines that must be rejected (one issue each), mixed with good ones. */
export const BROKEN =
  'good_one 1\n' +
  'bad_value{a="1"} one\n' +
  'unclosed{a="1" 2\n' +
  'open_quote{a="1} 2\n' +
  'bad_escape{a="\\t"} 3\n' +
  'dup{a="1",a="2"} 4\n' +
  '# TYPE weird sometype\n' +
  'no_value{a="1"}\n' +
  '9starts_with_digit 1\n' +
  'trailing 1 2 3\n' +
  'good_two 2\n';
