import numpy as np
import pytest

import tensorflux.datasets as ds


def test_digits_shapes_split_and_content():
    (x_train, y_train), (x_test, y_test) = ds.load_digits()
    assert x_train.shape == (1438, 8, 8) and x_test.shape == (359, 8, 8)
    assert x_train.dtype == np.uint8 and x_train.max() == 16 and x_train.min() == 0
    assert set(np.unique(y_test)) == set(range(10))
    # stratified: each class is about 20% test
    counts = np.bincount(np.concatenate([y_train, y_test]), minlength=10)
    np.testing.assert_allclose(np.bincount(y_test, minlength=10) / counts, 0.2, atol=0.01)
    again = ds.load_digits()
    np.testing.assert_array_equal(again[0][0], x_train)  # deterministic


@pytest.mark.parametrize("loader, n, features, classes", [
    (ds.load_iris, 150, 4, 3), (ds.load_wine, 178, 13, 3), (ds.load_breast_cancer, 569, 30, 2)])
def test_tables(loader, n, features, classes):
    (x_train, y_train), (x_test, y_test) = loader()
    assert len(x_train) + len(x_test) == n and x_train.shape[1] == features
    assert set(np.unique(np.concatenate([y_train, y_test]))) == set(range(classes))


def test_class_names_and_errors():
    assert ds.class_names("iris") == ["setosa", "versicolor", "virginica"]
    with pytest.raises(ValueError, match="Unknown dataset"):
        ds.class_names("mnist")
    with pytest.raises(ValueError, match="test_fraction"):
        ds.load_iris(test_fraction=1.5)
