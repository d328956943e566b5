#pragma once
// JSON conversion of every public input and result type: to_json / from_json beside each type,
// found by argument-dependent lookup (`nlohmann::json j = problem;`, `j.get<dnnplan::spot_request>()`),
// to_json_text(value) and parse_json<T>(stream or text). The rules every reader follows are in
// io/detail/json_core.hpp; each domain's layouts are at the top of its header. Include only the
// domain you read to compile less: io/spot_provision_json.hpp does not bring in the partitioners or the VM
// recommender.

#include <dnnplan/io/bamboo_run_json.hpp>
#include <dnnplan/io/core_json.hpp>
#include <dnnplan/io/deadline_policy_json.hpp>
#include <dnnplan/io/elastic_advisor_json.hpp>
#include <dnnplan/io/fit_json.hpp>
#include <dnnplan/io/fit_report_json.hpp>
#include <dnnplan/io/hybrid_plan_json.hpp>
#include <dnnplan/io/pipeline_plan_json.hpp>
#include <dnnplan/io/resilience_plan_json.hpp>
#include <dnnplan/io/spot_provision_json.hpp>
#include <dnnplan/io/vm_recommend_json.hpp>
