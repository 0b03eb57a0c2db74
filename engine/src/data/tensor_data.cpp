#include "data/tensor_data.h"

namespace stagewise::engine {

static torch::Tensor toTensor(const ByteSplit& split) {
  std::vector<int64_t> shape = {split.size()};
  shape.insert(shape.end(), split.sampleShape.begin(), split.sampleShape.end());
  auto bytes = torch::from_blob(const_cast<uint8_t*>(split.images.data()), shape, torch::kUInt8);
  return bytes.to(torch::kFloat32).div_(255.0f);
}

static torch::Tensor labels(const ByteSplit& split) {
  return torch::from_blob(const_cast<int64_t*>(split.labels.data()), {split.size()}, torch::kInt64).clone();
}

TensorData loadTensorData(const DatasetSpec& spec, uint64_t seed) {
  ByteDataset bytes = spec.kind == "synthetic" ? makeSyntheticDataset(spec, seed) : loadByteDataset(spec);
  if (bytes.train.size() == 0) throw DatasetError(spec.kind + ": the training set is empty");
  if (bytes.test.size() == 0) throw DatasetError(spec.kind + ": the test set is empty");
  TensorData data;
  data.trainX = toTensor(bytes.train);
  data.testX = toTensor(bytes.test);
  data.trainY = labels(bytes.train);
  data.testY = labels(bytes.test);
  const float mean = data.trainX.mean().item<float>();
  const float std = std::max(1e-6f, data.trainX.std().item<float>());
  data.trainX.sub_(mean).div_(std);
  data.testX.sub_(mean).div_(std);
  data.shape.dims = bytes.train.sampleShape;
  data.shape.numClasses = bytes.numClasses;
  return data;
}

}  // namespace stagewise::engine
